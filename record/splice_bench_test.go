package record

import (
	"testing"
)

// BenchmarkSplice encodes edited records, JSON and msgpack, copying what
// the edits left of their input (splice.go): a
// wide nested map with one value changed, one removed and one added, and
// the same with a root key set too. The record is edited once and encoded
// b.N times, so that the splice alone is measured.
func BenchmarkSplice(b *testing.B) {
	line := `{"ts":"2026-12-05T10:00:00Z","level":"info","k8s":` + fieldsJSON(40) + `,"msg":"done"}`
	edits := map[string]func(a *Arena, r *Record){
		"nested": func(a *Arena, r *Record) {
			k, _ := a.entry(mustGet(b, r, ".k8s"), 10)
			r.Set(append(MustParsePath(".k8s"), KeyStep(a.Str(k))), a.NewStringFrom("edited"))
			k, _ = a.entry(mustGet(b, r, ".k8s"), 20)
			r.Remove(append(MustParsePath(".k8s"), KeyStep(a.Str(k))))
			r.Set(MustParsePath(".k8s.added"), BoolValue(true))
		},
	}
	edits["nested_and_root"] = func(a *Arena, r *Record) {
		edits["nested"](a, r)
		r.Set(MustParsePath(".level"), a.NewStringFrom("warn"))
	}
	ev := mustDecode(b, NewArena(), line, Owned).appendMsgpackAs(nil, layoutEventV1)
	formats := []struct {
		name   string
		in     []byte
		decode func(a *Arena, in []byte) (*Record, error)
		encode func(r *Record, dst []byte) []byte
	}{
		{"json", []byte(line), func(a *Arena, in []byte) (*Record, error) { return a.DecodeJSON(in, Referenced) },
			(*Record).AppendJSON},
		{"msgpack", ev, func(a *Arena, in []byte) (*Record, error) {
			r, _, err := a.DecodeMsgpack(in, Referenced)
			return r, err
		}, (*Record).AppendMsgpack},
	}
	for _, name := range []string{"nested", "nested_and_root"} {
		for _, f := range formats {
			b.Run(f.name+"_"+name, func(b *testing.B) {
				a := NewArena()
				r, err := f.decode(a, f.in)
				if err != nil {
					b.Fatal(err)
				}
				edits[name](a, r)
				out := f.encode(r, nil)
				b.SetBytes(int64(len(f.in)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					out = f.encode(r, out[:0])
				}
			})
		}
	}
}

func mustGet(b *testing.B, r *Record, path string) Value {
	v, ok := r.Get(MustParsePath(path))
	if !ok {
		b.Fatalf("no %s", path)
	}
	return v
}
