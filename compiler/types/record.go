package types

import "github.com/policyrun/policyrun/record"

// scalarKinds pairs the scalar types with the record kinds their values
// have at run time, both ways: the one place the two enumerations meet.
var scalarKinds = [...]struct {
	typ *Type
	rec record.Kind
}{
	{NullType, record.Null},
	{BoolType, record.Bool},
	{IntType, record.Int},
	{FloatType, record.Float},
	{StringType, record.String},
	{BytesType, record.Bytes},
	{TimestampType, record.Timestamp},
}

// RecordKind is the record kind of the values of scalar type kind k, and
// false for a kind that is not a scalar one (any, containers, optional).
func (k Kind) RecordKind() (record.Kind, bool) {
	for _, s := range scalarKinds {
		if s.typ.Kind == k {
			return s.rec, true
		}
	}
	return record.Absent, false
}

// OfRecordKind is the scalar type whose values have record kind k, or
// nil for absent, arrays and maps, which no one type stands for.
func OfRecordKind(k record.Kind) *Type {
	for _, s := range scalarKinds {
		if s.rec == k {
			return s.typ
		}
	}
	return nil
}
