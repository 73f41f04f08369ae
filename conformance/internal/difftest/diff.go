package difftest

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/policytest"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// Mismatch describes a record on which backends disagree.
type Mismatch struct {
	Policy string
	Record []byte
	Detail string
}

func (m *Mismatch) Error() string {
	return fmt.Sprintf("%s\nrecord: %s\npolicy:\n%s", m.Detail, m.Record, m.Policy)
}

var negZero = regexp.MustCompile(`([:\[,])-0\.0\b`)

// run is one backend's outcome and output.
type run struct {
	out  spec.Result
	json string
	tag  string
	time int64
	// proto is, for an OTLP record kept without a fault, the record as a
	// protobuf request.
	proto string
}

// Compare loads the checked policy f on every backend, runs each record on
// each, and returns the first disagreement (outcome, fault reason, output
// record with its key order, tag or time), or a backend error. The
// records are JSON lines; for an OTLP policy (schema otlp), OTLP records'
// views in JSON (record.Arena.DecodeOTLPView), compared as views
// (resource, scope and time included).
func Compare(f *policy.File, info *check.Info, src string, backends []backend.Backend, recs [][]byte) error {
	runners, err := load(f, info, src, backends)
	if err != nil {
		return err
	}
	if f.IsOTLP() {
		return compareViews(src, backends, runners, recs)
	}
	a := record.NewArena()
	split, splits := splitPath(f)
	for _, line := range recs {
		// A fault leaves the record as it came, unless it came after a
		// split: the record is then as the split made it. Only an array
		// of one element at P makes one record that a fault after the
		// split leaves changed; any other single faulted record faulted
		// before the split or at it.
		unchanged := !splits || !oneElement(line, split)
		var first []run
		for i, rn := range runners {
			a.Reset()
			rec, err := a.DecodeJSON(line, record.Owned)
			if err != nil {
				return err
			}
			rec.SetTag([]byte("app.log"))
			rec.SetTime(policytest.TestNow.UnixNano() + 123456789)
			rec.Commit()
			// A policy with split makes a sequence of records: each is
			// compared.
			pieces, err := backend.RunAll(rn, rec, nil)
			if err != nil && !(len(pieces) > 0 && pieces[len(pieces)-1].Result.Faulted()) {
				return &Mismatch{Policy: src, Record: line, Detail: fmt.Sprintf("[%s] error: %v", backends[i].Name, err)}
			}
			var runs []run
			for _, pc := range pieces {
				got := run{out: pc.Result}
				if got.out.Action == spec.Keep {
					// gopher-lua turns -0.0 into 0.0 whenever a number goes
					// through a register (its small-integer cache), so the
					// backends are not held to agree on the sign of zero.
					// A record decoded from a line keeps the line's spelling
					// of what an edit left (json_splice.go), and backends may
					// leave different handles: the outputs are compared as
					// values with their key order, in their canonical form.
					got.json = negZero.ReplaceAllString(canonJSON(pc.Rec.AppendJSON(nil)), "${1}0.0")
					got.tag = string(pc.Rec.Tag())
					got.time = pc.Rec.Time()
					// A fault leaves the record as it came, or, after a
					// split, as the split made it.
					if unchanged && len(pieces) == 1 && got.out.Fault != spec.NoFault && got.json != string(bytes.TrimRight(line, "\r\n")) && !sameJSON(a, got.json, line) {
						return &Mismatch{Policy: src, Record: line, Detail: fmt.Sprintf("[%s] fault %s changed the record: %s", backends[i].Name, got.out.Fault, got.json)}
					}
				}
				runs = append(runs, got)
			}
			if i == 0 {
				first = runs
				continue
			}
			if fmt.Sprint(runs) != fmt.Sprint(first) {
				return &Mismatch{Policy: src, Record: line, Detail: fmt.Sprintf("[%s] %v\n[%s] %v",
					backends[0].Name, first, backends[i].Name, runs)}
			}
		}
	}
	return nil
}

// canonJSON returns a record's JSON output as the encoder writes its value
// (a line that does not decode is returned as it is).
func canonJSON(out []byte) string {
	a := record.NewArena()
	r, err := a.DecodeJSON(out, record.Owned)
	if err != nil {
		return string(out)
	}
	return string(a.AppendJSON(nil, r.Root()))
}

// sameJSON reports whether the encoded record equals the input line as a
// value (the encoder may spell numbers differently from the input).
func sameJSON(a *record.Arena, got string, line []byte) bool {
	x, err1 := a.DecodeJSON([]byte(got), record.Owned)
	y, err2 := a.DecodeJSON(line, record.Owned)
	return err1 == nil && err2 == nil && record.ValueEqual(a, x.Root(), a, y.Root())
}

// splitPath is the path of f's split P (the checker holds it to constant
// steps, E0650), and whether f has a split.
func splitPath(f *policy.File) (record.Path, bool) {
	for _, s := range f.Stmts {
		if sp, ok := s.(*policy.SplitStmt); ok {
			return check.SplitPath(sp.Target)
		}
	}
	return nil, false
}

// oneElement reports whether line's record holds an array of one
// element at p.
func oneElement(line []byte, p record.Path) bool {
	a := record.NewArena()
	rec, err := a.DecodeJSON(line, record.Owned)
	if err != nil {
		return false
	}
	v, _ := rec.Get(p)
	return v.Kind() == record.Array && a.Len(v) == 1
}
