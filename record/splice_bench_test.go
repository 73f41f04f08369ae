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
	for _, name := range []string{"nested", "nested_and_root"} {
		b.Run("json_"+name, func(b *testing.B) {
			a := NewArena()
			r := mustDecode(b, a, line, Referenced)
			edits[name](a, r)
			out := r.AppendJSON(nil)
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				out = r.AppendJSON(out[:0])
			}
		})
		b.Run("msgpack_"+name, func(b *testing.B) {
			ev := mustDecode(b, NewArena(), line, Owned).appendMsgpackAs(nil, layoutEventV1)
			a := NewArena()
			r, _, err := a.DecodeMsgpack(ev, Referenced)
			if err != nil {
				b.Fatal(err)
			}
			edits[name](a, r)
			out := r.AppendMsgpack(nil)
			b.SetBytes(int64(len(ev)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				out = r.AppendMsgpack(out[:0])
			}
		})
	}
}

func mustGet(b *testing.B, r *Record, path string) Value {
	v, ok := r.Get(MustParsePath(path))
	if !ok {
		b.Fatalf("no %s", path)
	}
	return v
}
