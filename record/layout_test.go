package record

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestValueLayout guards the shape of Value: 16 bytes, no pointers, and at
// most four fields, the most the compiler keeps in registers (a Value with
// one field per part was twice as slow on the edit path).
func TestValueLayout(t *testing.T) {
	typ := reflect.TypeFor[Value]()
	if n := typ.NumField(); n > 4 {
		t.Errorf("Value has %d fields, want at most 4", n)
	}
	if s := unsafe.Sizeof(Value{}); s != 16 {
		t.Errorf("Value is %d bytes, want 16", s)
	}
	for i := range typ.NumField() {
		if k := typ.Field(i).Type.Kind(); k == reflect.Pointer || k == reflect.String || k == reflect.Slice {
			t.Errorf("Value field %s holds a pointer", typ.Field(i).Name)
		}
	}
	tests := []struct {
		v    Value
		kind Kind
		sig  uint8
	}{
		{IntValue(-1), Int, 0},
		{strValue(String, 3, 1, 2), String, 0},
		{Value{h: uint32(Map) | flagWritable, ref: 4}, Map, 0},
		{Value{h: uint32(String) | flagPlain | 0x9f<<16, u: 7}, String, 0x9f},
	}
	for _, tt := range tests {
		v := tt.v
		if v.kind() != tt.kind || v.Kind() != tt.kind || v.sig() != tt.sig {
			t.Errorf("%+v: kind %v sig %#x, want %v %#x", v, v.kind(), v.sig(), tt.kind, tt.sig)
		}
		v.setSig(0x81)
		v.setKind(Bytes)
		if v.kind() != Bytes || v.sig() != 0x81 || v.flags() != tt.v.flags() || v.u != tt.v.u {
			t.Errorf("%+v: setSig and setKind changed more than they set: %+v", tt.v, v)
		}
	}
}
