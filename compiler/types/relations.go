package types

import (
	"slices"

	"github.com/policyrun/policyrun/internal/pmap"
)

// Identical reports whether a and b are the same type. Declaration positions
// of object fields do not matter.
func Identical(a, b *Type) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case Array, Map, Optional:
		return Identical(a.Elem, b.Elem)
	case Object:
		if a.Open != b.Open || a.NumFields() != b.NumFields() {
			return false
		}
		// Fields that a and b share as they are need no look.
		same := true
		pmap.Diff(a.fields, b.fields, func(_ fieldName, af fieldAt, aok bool, bf fieldAt, bok bool) {
			same = same && aok && bok && Identical(af.Type, bf.Type)
		})
		return same
	}
	return true
}

// AssignableTo reports whether a value of type v may be stored where a t is
// expected. T is assignable to T?, null to T?, everything present to any,
// and [] / {} to any array, map or object. Nothing converts: an int is not a
// float here (arithmetic is the one place they meet). An invalid type on
// either side is assignable, so one mistake yields one diagnostic.
func AssignableTo(v, t *Type) bool {
	if v.IsInvalid() || t.IsInvalid() || v.Kind == Never {
		return true
	}
	switch t.Kind {
	case Any:
		return v.Kind != Optional
	case Optional:
		if v.Kind == Null {
			return true
		}
		return AssignableTo(NonOptional(v), t.Elem)
	case Array:
		return v.Kind == Array && AssignableTo(v.Elem, t.Elem)
	case Map:
		switch v.Kind {
		case Map:
			return AssignableTo(v.Elem, t.Elem)
		case Object:
			if v.Open {
				return false
			}
			for _, f := range v.Fields() {
				if !AssignableTo(f.Type, t.Elem) {
					return false
				}
			}
			return true
		}
		return false
	case Object:
		return objectAssignable(v, t)
	}
	return v.Kind == t.Kind
}

func objectAssignable(v, t *Type) bool {
	switch v.Kind {
	case Object:
	case Map:
		// A map has no declared keys: only an open object asking for nothing
		// but optional fields can take one.
		if !t.Open {
			return false
		}
		for _, f := range t.Fields() {
			if !f.Type.IsOptional() || !AssignableTo(OptionalOf(v.Elem), f.Type) {
				return false
			}
		}
		return true
	default:
		return false
	}
	for _, tf := range t.Fields() {
		vf, found := v.Field(tf.Name)
		switch {
		case found:
			if !AssignableTo(vf.Type, tf.Type) {
				return false
			}
		case v.Open:
			if !AssignableTo(OptionalOf(AnyType), tf.Type) {
				return false
			}
		case !tf.Type.IsOptional():
			return false
		}
	}
	if t.Open {
		return true
	}
	if v.Open {
		return false
	}
	for _, vf := range v.Fields() {
		if _, found := t.Field(vf.Name); !found {
			return false
		}
	}
	return true
}

// Join returns the narrowest type both a and b are assignable to, and false
// when there is none short of any (an int and a string, say). Null joins T
// as T?; an object and a map join as a map; objects join field by field, a
// field one side lacks becoming optional.
func Join(a, b *Type) (*Type, bool) {
	switch {
	case a.IsInvalid():
		return b, true
	case b.IsInvalid():
		return a, true
	case a.Kind == Never:
		return b, true
	case b.Kind == Never:
		return a, true
	case Identical(a, b):
		return a, true
	case a.Kind == Null && b.Kind == Any, a.Kind == Any && b.Kind == Null:
		return AnyType, true // any holds null too
	case a.Kind == Null:
		return OptionalOf(b), true
	case b.Kind == Null:
		return OptionalOf(a), true
	case a.Kind == Optional || b.Kind == Optional:
		j, ok := Join(NonOptional(a), NonOptional(b))
		if !ok {
			return nil, false
		}
		return OptionalOf(j), true
	case a.Kind == Any || b.Kind == Any:
		return AnyType, true
	}
	switch {
	case a.Kind == Array && b.Kind == Array:
		e, ok := Join(a.Elem, b.Elem)
		return ArrayOf(e), ok
	case a.Kind == Map && b.Kind == Map:
		e, ok := Join(a.Elem, b.Elem)
		return MapOf(e), ok
	case a.Kind == Object && b.Kind == Object:
		return joinObjects(a, b), true
	case a.Kind == Map && b.Kind == Object:
		return joinMapObject(a, b)
	case a.Kind == Object && b.Kind == Map:
		return joinMapObject(b, a)
	}
	return nil, false
}

func joinMapObject(m, o *Type) (*Type, bool) {
	if o.Open {
		return nil, false
	}
	e := m.Elem
	for _, f := range o.Fields() {
		var ok bool
		if e, ok = Join(e, f.Type); !ok {
			return nil, false
		}
	}
	return MapOf(e), true
}

func joinObjects(a, b *Type) *Type {
	// The fields of a, in a's order, then those only b has, in b's. Fields
	// that a and b share as they are stay as they are: joining two versions
	// of one object costs what they changed.
	out := &Type{Kind: Object, Open: a.Open || b.Open, fields: a.fields, next: max(a.next, b.next)}
	var onlyB []fieldAt
	pmap.Diff(a.fields, b.fields, func(k fieldName, af fieldAt, aok bool, bf fieldAt, bok bool) {
		switch {
		case !aok:
			onlyB = append(onlyB, bf)
			return
		case bok:
			af.Type = Merge(af.Type, bf.Type)
		case b.Open:
			af.Type = OptionalOf(AnyType)
		default:
			af.Type = OptionalOf(af.Type)
		}
		out.fields = out.fields.Set(k, af)
	})
	slices.SortFunc(onlyB, func(x, y fieldAt) int { return x.order - y.order })
	for _, bf := range onlyB {
		t := OptionalOf(bf.Type)
		if a.Open {
			t = OptionalOf(AnyType)
		}
		out.setField(Field{Name: bf.Name, Type: t, Decl: bf.Decl})
	}
	return out
}

// Merge is Join for control flow: where two branches leave a value with
// types that do not join, the value is any afterwards (optional if either
// side was), which later code must narrow.
func Merge(a, b *Type) *Type {
	if j, ok := Join(a, b); ok {
		return j
	}
	if a.IsOptional() || b.IsOptional() {
		return OptionalOf(AnyType)
	}
	return AnyType
}

// Comparable reports whether == and != may compare a value of type a with
// one of type b: the same type (optionals included: absent equals nothing
// present), two numbers, null with an optional, or anything with any.
func Comparable(a, b *Type) bool {
	if a.IsInvalid() || b.IsInvalid() {
		return true
	}
	if a.Kind == Null || b.Kind == Null {
		return true
	}
	x, y := NonOptional(a), NonOptional(b)
	if x.Kind == Any || y.Kind == Any || x.Kind == Never || y.Kind == Never {
		return true
	}
	if x.IsNumeric() && y.IsNumeric() {
		return true
	}
	if x.Kind != y.Kind {
		return false
	}
	_, ok := Join(x, y)
	return ok
}

// Ordered reports whether < <= > >= apply to two values of types a and b:
// two numbers, two strings or two timestamps, none of them optional.
func Ordered(a, b *Type) bool {
	switch {
	case a.IsNumeric() && b.IsNumeric():
		return true
	case a.Kind == String && b.Kind == String, a.Kind == Timestamp && b.Kind == Timestamp:
		return true
	}
	return false
}
