// Package types is the type representation of the policy language: scalars,
// arrays, maps, objects and optionals, with assignability, joins and printing.
package types

import (
	"slices"
	"strings"

	"github.com/policyrun/policyrun/internal/pmap"
	"github.com/policyrun/policyrun/policy"
)

// Kind says what a Type is.
type Kind uint8

const (
	Invalid Kind = iota // the type of an expression that already has an error
	Never               // the element type of [] and {}: assignable to everything
	Bool
	Int
	Float
	String
	Bytes
	Timestamp
	Null
	Any
	Array    // Elem
	Map      // string keys, Elem values
	Object   // Fields, Open
	Optional // absent, null, or Elem
)

var kindNames = [...]string{
	Invalid: "invalid", Never: "never", Bool: "bool", Int: "int", Float: "float",
	String: "string", Bytes: "bytes", Timestamp: "timestamp", Null: "null", Any: "any",
	Array: "array", Map: "map", Object: "object", Optional: "optional",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(?)"
}

// Type is a type. Types are immutable values: every operation that changes
// one returns a new Type, so types can be shared between flow states.
type Type struct {
	Kind Kind
	Elem *Type // Array, Map, Optional
	Open bool  // Object: undeclared keys may exist and read as any?
	// fields are an Object's fields (see Fields), in a persistent map so
	// that a write to one field of an object of n fields costs O(log n), and
	// two versions of one object compare and join in what they changed.
	fields pmap.Map[fieldName, fieldAt]
	// next is the order number of a field added to the object.
	next int
}

// fieldName is a field's name as a map key.
type fieldName string

// Hash is FNV-1a, mixed so that every bit depends on every byte.
func (n fieldName) Hash() uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(n); i++ {
		h ^= uint64(n[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// fieldAt is a field with its place in the declaration order.
type fieldAt struct {
	Field
	order int
}

// Field is one declared key of an object type.
type Field struct {
	Name string
	Type *Type
	// Decl is where the schema (or a literal, or a write) declared the field;
	// diagnostics cite its line. It may be invalid.
	Decl policy.Pos
}

// The basic types, shared.
var (
	InvalidType   = &Type{Kind: Invalid}
	NeverType     = &Type{Kind: Never}
	BoolType      = &Type{Kind: Bool}
	IntType       = &Type{Kind: Int}
	FloatType     = &Type{Kind: Float}
	StringType    = &Type{Kind: String}
	BytesType     = &Type{Kind: Bytes}
	TimestampType = &Type{Kind: Timestamp}
	NullType      = &Type{Kind: Null}
	AnyType       = &Type{Kind: Any}
)

// Basic returns the shared type of a scalar name (bool int float string bytes
// timestamp null any), or nil if name is not one.
func Basic(name string) *Type {
	switch name {
	case "bool":
		return BoolType
	case "int":
		return IntType
	case "float":
		return FloatType
	case "string":
		return StringType
	case "bytes":
		return BytesType
	case "timestamp":
		return TimestampType
	case "null":
		return NullType
	case "any":
		return AnyType
	}
	return nil
}

// ArrayOf returns array<elem>.
func ArrayOf(elem *Type) *Type { return &Type{Kind: Array, Elem: elem} }

// MapOf returns map<elem>.
func MapOf(elem *Type) *Type { return &Type{Kind: Map, Elem: elem} }

// ObjectOf returns an object type with the given fields, in this order (a
// name given twice keeps its first place and its last type).
func ObjectOf(open bool, fields ...Field) *Type {
	t := &Type{Kind: Object, Open: open}
	for _, f := range fields {
		t.setField(f)
	}
	return t
}

// WithField returns object t with the field f: a field of that name keeps
// its place and takes f's type and declaration, and a new one goes last.
func (t *Type) WithField(f Field) *Type {
	out := *t
	out.setField(f)
	return &out
}

func (t *Type) setField(f Field) {
	at := fieldAt{Field: f, order: t.next}
	if old, ok := t.fields.Get(fieldName(f.Name)); ok {
		at.order = old.order
	} else {
		t.next++
	}
	t.fields = t.fields.Set(fieldName(f.Name), at)
}

// WithFieldTypes returns object t with f applied to the type of every
// field.
func (t *Type) WithFieldTypes(f func(Field) *Type) *Type {
	out := *t
	t.fields.All(func(k fieldName, at fieldAt) bool {
		at.Type = f(at.Field)
		out.fields = out.fields.Set(k, at)
		return true
	})
	return &out
}

// FieldOrder returns the place of the field name in t's declaration order
// (a number that orders t's fields, not an index), and whether t declares it.
func (t *Type) FieldOrder(name string) (int, bool) {
	at, ok := t.fields.Get(fieldName(name))
	return at.order, ok
}

// EachField calls f for each field of object t, in no particular order
// (but the same on every run): O(n), where Fields sorts.
func (t *Type) EachField(f func(Field)) {
	t.fields.All(func(_ fieldName, at fieldAt) bool {
		f(at.Field)
		return true
	})
}

// NumFields is the number of fields of object t.
func (t *Type) NumFields() int { return t.fields.Len() }

// Fields returns the fields of object t in declaration order (the order of
// ObjectOf, then of WithField). It costs O(n log n): look fields up with
// Field.
func (t *Type) Fields() []Field {
	all := make([]fieldAt, 0, t.fields.Len())
	t.fields.All(func(_ fieldName, at fieldAt) bool {
		all = append(all, at)
		return true
	})
	slices.SortFunc(all, func(a, b fieldAt) int { return a.order - b.order })
	out := make([]Field, len(all))
	for i, at := range all {
		out[i] = at.Field
	}
	return out
}

// OptionalOf returns t?. It normalises: t?? is t?, null? is null, and an
// invalid type stays invalid.
func OptionalOf(t *Type) *Type {
	switch t.Kind {
	case Optional, Null, Invalid:
		return t
	case Never:
		return NullType
	}
	return &Type{Kind: Optional, Elem: t}
}

// NonOptional returns t without its optionality: T for T?, t otherwise.
// null stays null (there is no value left).
func NonOptional(t *Type) *Type {
	if t.Kind == Optional {
		return t.Elem
	}
	return t
}

// IsOptional reports whether a value of type t may be absent or null.
func (t *Type) IsOptional() bool { return t.Kind == Optional || t.Kind == Null }

// IsNumeric reports whether t is int or float.
func (t *Type) IsNumeric() bool { return t.Kind == Int || t.Kind == Float }

// IsInvalid reports whether t is the type of an erroneous expression; checks
// on it are skipped so that one mistake gives one diagnostic.
func (t *Type) IsInvalid() bool { return t == nil || t.Kind == Invalid }

// Field returns the declared field name of object t, and whether t
// declares it.
func (t *Type) Field(name string) (Field, bool) {
	at, ok := t.fields.Get(fieldName(name))
	return at.Field, ok
}

// String writes t as the language writes it: "map<string>?",
// "{pod_name: string, ...}".
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t *Type) write(b *strings.Builder) {
	if t == nil {
		b.WriteString("invalid")
		return
	}
	switch t.Kind {
	case Array, Map:
		b.WriteString(t.Kind.String())
		b.WriteByte('<')
		t.Elem.write(b)
		b.WriteByte('>')
	case Optional:
		t.Elem.write(b)
		b.WriteByte('?')
	case Object:
		b.WriteByte('{')
		for i, f := range t.Fields() {
			if i > 0 {
				b.WriteString(", ")
			}
			if isIdent(f.Name) {
				b.WriteString(f.Name)
			} else {
				b.WriteString(policy.Quote(f.Name))
			}
			b.WriteString(": ")
			f.Type.write(b)
		}
		if t.Open {
			if t.NumFields() > 0 {
				b.WriteString(", ")
			}
			b.WriteString("...")
		}
		b.WriteByte('}')
	default:
		b.WriteString(t.Kind.String())
	}
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return true
}
