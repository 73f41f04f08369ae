package conformance

import (
	"bytes"
	"os"
	"testing"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/policytest"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// TestSplicedOutput holds the spliced JSON output of edited records
// (record/json_splice.go) to the full encode: over the test inputs of the
// whole corpus, as written and respelled (spaces, escaped slashes), and
// over the B1 data with the nine B1 policies, on every backend, the output
// a record writes must be, once decoded and encoded again, the full
// encode of its root: the same value with the same key order.
func TestSplicedOutput(t *testing.T) {
	opts := spec.Options{Clock: spec.FixedClock(policytest.TestNow)}
	check := func(t *testing.T, where string, rec *record.Record) (spelt bool) {
		t.Helper()
		got := rec.AppendJSON(nil)
		if bytes.ContainsAny(got, "\r\n") {
			t.Fatalf("%s: output %s holds a line break", where, got)
		}
		full := rec.Arena().AppendJSON(nil, rec.Root())
		if g, w := canonLine(t, got), canonLine(t, full); g != w {
			t.Fatalf("%s:\nspliced %s\n  canon %s\n   full %s", where, got, g, w)
		}
		return !bytes.Equal(got, full)
	}
	load := func(t *testing.T, fn string, src []byte) (*policy.File, []backend.Program) {
		f, info := checkPolicy(t, fn, src)
		var progs []backend.Program
		for _, b := range backends {
			p, err := b.Load(f, info, opts)
			if err != nil {
				t.Fatalf("%s: [%s] %v", fn, b.Name, err)
			}
			progs = append(progs, p)
		}
		return f, progs
	}
	t.Run("corpus", func(t *testing.T) {
		a := record.NewArena()
		for _, fn := range corpus(t) {
			src, err := os.ReadFile(fn)
			if err != nil {
				t.Fatal(err)
			}
			f, progs := load(t, fn, src)
			if f.IsOTLP() {
				continue
			}
			for _, tc := range f.Tests {
				for bi, p := range progs {
					for _, respelt := range []bool{false, true} {
						a.Reset()
						rec, err := policytest.NewInput(f, tc, a)
						if err != nil {
							t.Fatal(err)
						}
						if respelt {
							line := respell(rec.AppendJSON(nil))
							if rec, err = a.DecodeJSON(line, record.Owned); err != nil {
								t.Fatalf("%s: %s: %v", fn, line, err)
							}
						}
						if res, _ := p.Run(rec); res.Action == spec.Keep {
							check(t, fn+": "+tc.Name+" ["+backends[bi].Name+"]", rec)
						}
					}
				}
			}
		}
	})
	t.Run("b1", func(t *testing.T) {
		n := 3000
		if testing.Short() {
			n = 300
		}
		data := map[string][][]byte{"flat": genLines(t, "flat", 1, n), "k8s": genLines(t, "k8s", 1, n)}
		spelt := 0 // edited outputs that kept the respelt line's spelling
		for _, bp := range b1Policies(t) {
			edits := bp.name[0] != '1' && bp.name[0] != '2' && bp.name[0] != '4'
			_, progs := load(t, bp.file, bp.src)
			a := record.NewArena()
			for bi, p := range progs {
				for i, line := range data[bp.kind] {
					if i%64 == 0 {
						a.Reset()
					}
					for _, l := range [][]byte{line, respell(line)} {
						rec, err := a.DecodeJSON(l, record.Referenced)
						if err != nil {
							t.Fatal(err)
						}
						if res, _ := p.Run(rec); res.Action == spec.Keep {
							if check(t, bp.name+" ["+backends[bi].Name+"]: "+string(l), rec) && edits {
								spelt++
							}
						}
					}
				}
			}
		}
		// The respelt lines of the editing policies keep their spelling
		// where the edits left them: splicing is at work.
		if spelt < n {
			t.Errorf("%d edited outputs spliced, want at least %d", spelt, n)
		}
	})
}

// canonLine decodes a JSON line and encodes it again.
func canonLine(t *testing.T, line []byte) string {
	t.Helper()
	a := record.NewArena()
	r, err := a.DecodeJSON(line, record.Owned)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return string(a.AppendJSON(nil, r.Root()))
}

// respell writes the JSON line b in another spelling of the same value:
// a space after each ':' and ',' and around brackets, and '/' escaped in
// strings.
func respell(b []byte) []byte {
	var out []byte
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case in && c == '\\':
			out = append(out, c, b[i+1])
			i++
			continue
		case in && c == '/':
			out = append(out, '\\', '/')
			continue
		case c == '"':
			in = !in
		case !in && (c == ':' || c == ',' || c == '{' || c == '['):
			out = append(out, c, ' ')
			continue
		case !in && (c == '}' || c == ']'):
			out = append(out, ' ', c)
			continue
		}
		out = append(out, c)
	}
	return out
}
