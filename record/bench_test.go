package record

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// batch is the number of records decoded into an arena between Resets,
// as a pipeline batch would be.
const batch = 256

// BenchmarkRecordDecode is B2: decoding the fixed record of b2JSON (shape
// in shapes_test.go) one record per op, with the arena reset every batch.
// arena-B/record is the arena's reserved bytes divided by the records of
// a batch.
func BenchmarkRecordDecode(b *testing.B) {
	event := b2Msgpack(b)
	line := []byte(b2JSON)
	body := b2Map(b)

	arena := func(b *testing.B, decode func(a *Arena)) {
		a := NewArena()
		for i := 0; i < batch; i++ { // reach the steady state first
			decode(a)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if i%batch == 0 {
				a.Reset()
			}
			decode(a)
		}
		b.StopTimer()
		a.Reset()
		for i := 0; i < batch; i++ {
			decode(a)
		}
		b.ReportMetric(float64(a.Reserved())/batch, "arena-B/record")
	}
	msg := func(mode Mode) func(a *Arena) {
		return func(a *Arena) {
			if _, _, err := a.DecodeMsgpack(event, mode); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("referenced", func(b *testing.B) { arena(b, msg(Referenced)) })
	b.Run("owned", func(b *testing.B) { arena(b, msg(Owned)) })
	pLevel, pStatus, pNew := NewPath("level"), NewPath("status"), NewPath("http", "added")
	b.Run("owned_edits", func(b *testing.B) {
		arena(b, func(a *Arena) {
			r, _, err := a.DecodeMsgpack(event, Owned)
			if err != nil {
				b.Fatal(err)
			}
			r.Set(pLevel, a.NewStringFrom("warn"))
			r.Remove(pStatus)
			r.Set(pNew, IntValue(1))
		})
	})
	b.Run("json_referenced", func(b *testing.B) {
		arena(b, func(a *Arena) {
			if _, err := a.DecodeJSON(line, Referenced); err != nil {
				b.Fatal(err)
			}
		})
	})
	// Records as policyrun gen flat writes them: one op decodes a pair,
	// the second with escapes, the last string at the end of each line.
	flat := [][]byte{[]byte(flatJSON[0]), []byte(flatJSON[1])}
	b.Run("json_flat_pair", func(b *testing.B) {
		arena(b, func(a *Arena) {
			for _, l := range flat {
				if _, err := a.DecodeJSON(l, Referenced); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	// The baselines: the same record decoded into a Go map.
	for _, m := range []struct {
		name      string
		unmarshal func([]byte, any) error
		in        []byte
	}{{"json_map", json.Unmarshal, line}, {"msgpack_map", msgpack.Unmarshal, body}} {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var out map[string]any
				if err := m.unmarshal(m.in, &out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEditChain is B3: decode a JSON line, apply 0 or 6 upserts
// (3 overwrite existing fields at the start, middle and end, 3 add new
// ones), encode the JSON line.
func BenchmarkEditChain(b *testing.B) {
	for _, n := range []int{12, 128} {
		line := []byte(fieldsJSON(n))
		a := NewArena()
		r, err := a.DecodeJSON(line, Owned)
		if err != nil {
			b.Fatal(err)
		}
		ps := b3Paths(r, n)
		// edits0 passes the unchanged line through; edits0_reencode
		// encodes it from the nodes as an edited record must be, so that
		// upserts6 / edits0_reencode is the cost of the edits alone (B3).
		for _, edits := range []int{0, -1, 6} {
			name := "fields" + strconv.Itoa(n) + "_edits0"
			switch {
			case edits > 0:
				name = "fields" + strconv.Itoa(n) + "_upserts6"
			case edits < 0:
				name = "fields" + strconv.Itoa(n) + "_edits0_reencode"
			}
			b.Run(name, func(b *testing.B) {
				a := NewArena()
				out := make([]byte, 0, 2*len(line))
				b.ReportAllocs()
				b.SetBytes(int64(len(line)))
				for i := -batch; i < b.N; i++ { // from -batch: reach the steady state first
					if i == 0 {
						b.ResetTimer()
					}
					if i%batch == 0 {
						a.Reset()
					}
					r, err := a.DecodeJSON(line, Referenced)
					if err != nil {
						b.Fatal(err)
					}
					if edits > 0 {
						b3Upserts(r, ps, i)
					}
					if edits < 0 {
						out = a.AppendJSON(out[:0], r.Root())
						continue
					}
					out = r.AppendJSON(out[:0])
				}
			})
		}
	}
}

// BenchmarkSideBySide runs the B2 and B3 contenders in alternation, a
// short chunk of records each per op, and reports the median ns/record of
// each and the ratios the targets are stated in. On a shared, noisy machine
// these ratios are steadier than those of separate benchmarks, whose loads
// differ (docs/records.md, "Benchmarks (B2, B3)": report ratios measured
// side by side).
func BenchmarkSideBySide(b *testing.B) {
	event := b2Msgpack(b)
	line := []byte(b2JSON)
	body := b2Map(b)
	a := NewArena()
	k := 0
	reset := func() {
		if k++; k%batch == 0 {
			a.Reset()
		}
	}
	wide := []byte(fieldsJSON(128))
	wr := mustDecode(b, NewArena(), string(wide), Owned)
	ps := b3Paths(wr, 128)
	out := make([]byte, 0, 2*len(wide))
	contenders := []struct {
		name  string
		chunk int
		f     func()
	}{
		{"referenced", 200, func() { reset(); a.DecodeMsgpack(event, Referenced) }},
		{"json_referenced", 200, func() { reset(); a.DecodeJSON(line, Referenced) }},
		{"json_map", 20, func() { var m map[string]any; json.Unmarshal(line, &m) }},
		{"msgpack_map", 50, func() { var m map[string]any; msgpack.Unmarshal(body, &m) }},
		{"fields128_edits0", 10, func() {
			reset()
			r, _ := a.DecodeJSON(wide, Referenced)
			out = r.AppendJSON(out[:0])
		}},
		{"fields128_upserts6", 10, func() {
			reset()
			r, _ := a.DecodeJSON(wide, Referenced)
			b3Upserts(r, ps, k)
			out = r.AppendJSON(out[:0])
		}},
		// The unchanged record encoded from its nodes, as an edited one
		// is: upserts6 / edits0_reencode is the cost of the edits alone.
		{"fields128_edits0_reencode", 10, func() {
			reset()
			r, _ := a.DecodeJSON(wide, Referenced)
			out = a.AppendJSON(out[:0], r.Root())
		}},
	}
	samples := make([][]float64, len(contenders))
	for i := 0; i < b.N; i++ {
		for c, ct := range contenders {
			t0 := time.Now()
			for j := 0; j < ct.chunk; j++ {
				ct.f()
			}
			samples[c] = append(samples[c], float64(time.Since(t0).Nanoseconds())/float64(ct.chunk))
		}
	}
	med := make([]float64, len(samples))
	for c := range samples {
		slices.Sort(samples[c])
		med[c] = samples[c][len(samples[c])/2]
		b.ReportMetric(med[c], contenders[c].name+"-ns")
	}
	b.ReportMetric(med[2]/med[1], "json_map/json_referenced")
	b.ReportMetric(med[3]/med[0], "msgpack_map/referenced")
	b.ReportMetric(med[5]/med[4], "upserts6/edits0")
	b.ReportMetric(med[5]/med[6], "upserts6/edits0_reencode")
}

// BenchmarkEncodeJSON encodes decoded records with the value encoder (no
// pass-through): strings the decoder found plain, and the same records
// rebuilt with policy-made strings, which are scanned for escapes.
func BenchmarkEncodeJSON(b *testing.B) {
	for _, c := range []struct{ name, line string }{{"b2", b2JSON}, {"fields128", fieldsJSON(128)}} {
		a := NewArena()
		r, err := a.DecodeJSON([]byte(c.line), Owned)
		if err != nil {
			b.Fatal(err)
		}
		ma := NewArena()
		made, err := ma.fromGo(r.ToGo())
		if err != nil {
			b.Fatal(err)
		}
		out := make([]byte, 0, 2*len(c.line))
		b.Run(c.name+"_decoded", func(b *testing.B) {
			b.SetBytes(int64(len(c.line)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				out = a.AppendJSON(out[:0], r.Root())
			}
		})
		b.Run(c.name+"_made", func(b *testing.B) {
			b.SetBytes(int64(len(c.line)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				out = ma.AppendJSON(out[:0], made)
			}
		})
	}
}

// b3Paths are the six paths B3 upserts in r, decoded from a line of n
// fields: its first, middle and last fields, then three it lacks.
func b3Paths(r *Record, n int) []Path {
	var ps []Path
	for _, i := range []int{0, n / 2, n - 1} {
		k, _ := r.a.entry(r.Root(), i)
		ps = append(ps, NewPath(r.a.Str(k)))
	}
	return append(ps, NewPath("added_service"), NewPath("edited"), NewPath("env"))
}

// b3Upserts makes B3's six upserts of r at ps, the second setting i.
func b3Upserts(r *Record, ps []Path, i int) {
	a := r.a
	r.Set(ps[0], a.NewStringFrom("overwritten"))
	r.Set(ps[1], IntValue(int64(i)))
	r.Set(ps[2], BoolValue(false))
	r.Set(ps[3], a.NewStringFrom("checkout"))
	r.Set(ps[4], BoolValue(true))
	r.Set(ps[5], a.NewStringFrom("prod"))
}
