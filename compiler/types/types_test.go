package types

import (
	"testing"

	"github.com/policyrun/policyrun/record"
)

var (
	strOpt = OptionalOf(StringType)
	k8s    = ObjectOf(true,
		Field{Name: "pod_name", Type: StringType},
		Field{Name: "labels", Type: MapOf(StringType)})
	closedAB = ObjectOf(false, Field{Name: "a", Type: IntType}, Field{Name: "b", Type: OptionalOf(StringType)})
)

func TestString(t *testing.T) {
	tests := []struct {
		t    *Type
		want string
	}{
		{IntType, "int"},
		{OptionalOf(MapOf(StringType)), "map<string>?"},
		{ArrayOf(OptionalOf(AnyType)), "array<any?>"},
		{k8s, "{pod_name: string, labels: map<string>, ...}"},
		{ObjectOf(true), "{...}"},
		{ObjectOf(false), "{}"},
		{ObjectOf(false, Field{Name: "a b", Type: BoolType}), `{"a b": bool}`},
		{OptionalOf(OptionalOf(IntType)), "int?"},
		{OptionalOf(NullType), "null"},
		{InvalidType, "invalid"},
	}
	for _, tt := range tests {
		if got := tt.t.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestAssignable(t *testing.T) {
	tests := []struct {
		v, t *Type
		want bool
	}{
		{IntType, IntType, true},
		{IntType, OptionalOf(IntType), true},
		{NullType, OptionalOf(IntType), true},
		{OptionalOf(IntType), IntType, false},
		{IntType, FloatType, false}, // only arithmetic mixes numbers
		{FloatType, IntType, false},
		{StringType, AnyType, true},
		{NullType, AnyType, true},
		{OptionalOf(StringType), AnyType, false},
		{OptionalOf(StringType), OptionalOf(AnyType), true},
		{AnyType, StringType, false},
		{ArrayOf(IntType), ArrayOf(OptionalOf(IntType)), true},
		{ArrayOf(NeverType), ArrayOf(StringType), true}, // []
		{ObjectOf(false), MapOf(StringType), true},      // {}
		{ObjectOf(false, Field{Name: "x", Type: StringType}), MapOf(StringType), true},
		{ObjectOf(false, Field{Name: "x", Type: IntType}), MapOf(StringType), false},
		{ObjectOf(true), MapOf(StringType), false},
		{MapOf(StringType), MapOf(AnyType), true},
		{MapOf(AnyType), MapOf(StringType), false},
		{ObjectOf(false, Field{Name: "a", Type: IntType}), closedAB, true},
		{ObjectOf(false, Field{Name: "b", Type: StringType}), closedAB, false},
		{ObjectOf(false, Field{Name: "a", Type: IntType}, Field{Name: "c", Type: IntType}), closedAB, false},
		{ObjectOf(false, Field{Name: "a", Type: IntType}, Field{Name: "c", Type: IntType}), ObjectOf(true, Field{Name: "a", Type: IntType}), true},
		{InvalidType, StringType, true},
		{StringType, InvalidType, true},
		{TimestampType, StringType, false},
	}
	for _, tt := range tests {
		if got := AssignableTo(tt.v, tt.t); got != tt.want {
			t.Errorf("AssignableTo(%s, %s) = %v, want %v", tt.v, tt.t, got, tt.want)
		}
	}
}

func TestJoinMerge(t *testing.T) {
	tests := []struct {
		a, b  *Type
		join  string // "" when there is no join
		merge string
	}{
		{IntType, IntType, "int", "int"},
		{IntType, NullType, "int?", "int?"},
		{strOpt, StringType, "string?", "string?"},
		{IntType, StringType, "", "any"},
		{OptionalOf(IntType), StringType, "", "any?"},
		{IntType, FloatType, "", "any"},
		{ArrayOf(NeverType), ArrayOf(StringType), "array<string>", "array<string>"},
		{MapOf(StringType), ObjectOf(false), "map<string>", "map<string>"},
		{ObjectOf(false, Field{Name: "a", Type: IntType}), ObjectOf(false, Field{Name: "b", Type: BoolType}), "{a: int?, b: bool?}", "{a: int?, b: bool?}"},
		{ObjectOf(false, Field{Name: "a", Type: IntType}), ObjectOf(true, Field{Name: "a", Type: StringType}), "{a: any, ...}", "{a: any, ...}"},
		{AnyType, StringType, "any", "any"},
		{AnyType, NullType, "any", "any"},
		{OptionalOf(AnyType), NullType, "any?", "any?"},
	}
	for _, tt := range tests {
		j, ok := Join(tt.a, tt.b)
		got := ""
		if ok {
			got = j.String()
		}
		if got != tt.join {
			t.Errorf("Join(%s, %s) = %q, want %q", tt.a, tt.b, got, tt.join)
		}
		if m := Merge(tt.a, tt.b).String(); m != tt.merge {
			t.Errorf("Merge(%s, %s) = %q, want %q", tt.a, tt.b, m, tt.merge)
		}
	}
}

func TestComparableOrdered(t *testing.T) {
	tests := []struct {
		a, b                *Type
		comparable, ordered bool
	}{
		{IntType, StringType, false, false},
		{IntType, FloatType, true, true},
		{strOpt, StringType, true, false},
		{strOpt, NullType, true, false},
		{OptionalOf(AnyType), StringType, true, false},
		{BoolType, IntType, false, false},
		{BoolType, BoolType, true, false},
		{MapOf(StringType), MapOf(StringType), true, false},
		{TimestampType, StringType, false, false},
		{StringType, StringType, true, true},
		{StringType, IntType, false, false},
		{TimestampType, TimestampType, true, true},
	}
	for _, tt := range tests {
		if got := Comparable(tt.a, tt.b); got != tt.comparable {
			t.Errorf("Comparable(%s, %s) = %v", tt.a, tt.b, got)
		}
		if got := Ordered(tt.a, tt.b); got != tt.ordered {
			t.Errorf("Ordered(%s, %s) = %v", tt.a, tt.b, got)
		}
	}
}

func TestBasic(t *testing.T) {
	for _, n := range []string{"bool", "int", "float", "string", "bytes", "timestamp", "null", "any"} {
		if b := Basic(n); b == nil || b.String() != n {
			t.Errorf("Basic(%q) = %v", n, b)
		}
	}
	if Basic("integer") != nil {
		t.Error("Basic(integer) != nil")
	}
}

func TestParse(t *testing.T) {
	for _, s := range []string{"string", "int?", "any?", "timestamp", "null", "array<string>", "map<any>?", "array<map<int>?>", "bytes", "{a: int}", "{a: int?, b: map<string>}?", "{}"} {
		typ, err := Parse(s)
		if err != nil {
			t.Errorf("Parse(%q): %v", s, err)
			continue
		}
		if typ.String() != s {
			t.Errorf("Parse(%q) = %s", s, typ)
		}
	}
	for _, s := range []string{"", "strin", "map<string", "array<>", "string??", "{a: int, a: int}", "{a int}", "{a: int", "{a: int, ...}", "{a: int,b: int}", "T?", "string|array"} {
		if typ, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %s, want an error", s, typ)
		}
	}
}

// TestRecordKinds: each scalar type and the record kind of its values
// map to each other both ways; no other kind has one.
func TestRecordKinds(t *testing.T) {
	for _, k := range []record.Kind{record.Null, record.Bool, record.Int, record.Float, record.String, record.Bytes, record.Timestamp} {
		typ := OfRecordKind(k)
		if typ == nil {
			t.Errorf("OfRecordKind(%v) = nil", k)
			continue
		}
		if back, ok := typ.Kind.RecordKind(); !ok || back != k {
			t.Errorf("%v: RecordKind() = %v, %v; want %v", typ, back, ok, k)
		}
		if typ.String() != k.String() {
			t.Errorf("OfRecordKind(%v) = %v", k, typ)
		}
	}
	for _, k := range []record.Kind{record.Absent, record.Array, record.Map} {
		if typ := OfRecordKind(k); typ != nil {
			t.Errorf("OfRecordKind(%v) = %v, want nil", k, typ)
		}
	}
	for _, k := range []Kind{Invalid, Never, Any, Array, Map, Object, Optional} {
		if rk, ok := k.RecordKind(); ok {
			t.Errorf("%v.RecordKind() = %v, want none", k, rk)
		}
	}
}
