package policytest

import (
	"fmt"
	"strings"
	"time"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// Result is the result of one test block over every backend.
type Result struct {
	File string       // the policy file
	Test *policy.Test // the test block
	// Failures holds one readable message (with a diff) per problem: a
	// backend that missed the expectation, or two backends that disagree.
	// A test passed when it is empty.
	Failures []string
}

// Passed reports whether the test passed on every backend.
func (r Result) Passed() bool { return len(r.Failures) == 0 }

// Name is the test's name.
func (r Result) Name() string { return r.Test.Name }

// RunFile runs every test block of f (parsed, and checked without errors
// into info) on every backend, in the order given, and returns one Result
// per test in source order.
//
// A policy with parameters is loaded once per test, with the values of
// the test's param lines: a parameter is a constant of the load.
func RunFile(f *policy.File, info *check.Info, backends []backend.Backend) []Result {
	withParams := declaresParams(f)
	// A policy with state is loaded for each test, so that each starts
	// with fresh state and a clock of its own.
	perTest := withParams || len(info.StateOrder) > 0
	var runners []backend.Program
	var loadErr []error
	clocks := make([]*testClock, len(backends))
	if !perTest {
		runners, loadErr = loadAll(f, info, backends, clocks)
	}
	var out []Result
	for _, t := range f.Tests {
		if t == nil {
			continue
		}
		res := Result{File: f.Filename, Test: t}
		if withParams {
			tinfo, msgs := checkParams(f, info.Imports, t)
			if len(msgs) > 0 {
				res.Failures = msgs
				out = append(out, res)
				continue
			}
			runners, loadErr = loadAll(f, tinfo, backends, clocks)
		} else if perTest {
			runners, loadErr = loadAll(f, info, backends, clocks)
		}
		runs := make([]run, 0, len(backends))
		for i, b := range backends {
			if loadErr[i] != nil {
				res.Failures = append(res.Failures, fmt.Sprintf("[%s] cannot load the policy: %v", b.Name, loadErr[i]))
				continue
			}
			r, err := runOne(runners[i], f, t, clocks[i])
			if err != nil {
				res.Failures = append(res.Failures, fmt.Sprintf("[%s] %v", b.Name, err))
				continue
			}
			r.backend = b.Name
			if msg := r.meets(f, t); msg != "" {
				res.Failures = append(res.Failures, fmt.Sprintf("[%s] %s", b.Name, msg))
			}
			runs = append(runs, r)
		}
		for _, r := range runs[min(1, len(runs)):] {
			if msg := agree(runs[0], r); msg != "" {
				res.Failures = append(res.Failures, msg)
			}
		}
		out = append(out, res)
	}
	return out
}

// loadAll loads f on every backend, each with a clock of its own
// (clocks[i]), that the test's at and wait lines move.
func loadAll(f *policy.File, info *check.Info, backends []backend.Backend, clocks []*testClock) ([]backend.Program, []error) {
	runners := make([]backend.Program, len(backends))
	loadErr := make([]error, len(backends))
	for i, b := range backends {
		clocks[i] = &testClock{now: TestNow}
		opts := TestOptions()
		opts.Clock = clocks[i].read
		runners[i], loadErr[i] = b.Load(f, info, opts)
	}
	return runners, loadErr
}

// testClock is the clock of a test's runs: TestNow, unless its at and
// wait lines move it. Runs of one test read it from one goroutine.
type testClock struct{ now time.Time }

func (c *testClock) read() time.Time { return c.now }

// set applies the at and wait lines before an input.
func (c *testClock) set(clocks []*policy.TestClock) error {
	for _, k := range clocks {
		at, wait, err := check.TestClock(k)
		if err != nil {
			return err
		}
		if k.Wait {
			c.now = c.now.Add(wait)
		} else {
			c.now = at
		}
	}
	return nil
}

func declaresParams(f *policy.File) bool {
	for _, d := range f.Decls {
		if _, ok := d.(*policy.ParamDecl); ok {
			return true
		}
	}
	return false
}

// checkParams checks f with the values of t's param lines, and returns
// its errors as failures of the test: a value missing, unknown or of the
// wrong type.
func checkParams(f *policy.File, imports check.Imports, t *policy.Test) (*check.Info, []string) {
	params := spec.Params{}
	var msgs []string
	for _, prm := range t.Params {
		v, err := LitValue(prm.Value)
		if err != nil {
			msgs = append(msgs, fmt.Sprintf("param %s: %v", prm.Name.Name, err))
			continue
		}
		params[prm.Name.Name] = spec.Param{Value: v, Where: fmt.Sprintf("line %d (test %q)", prm.Param.Line, t.Name)}
	}
	info, ds := check.Config{Params: params, Bound: true, Imports: imports}.Check(f)
	for _, d := range ds {
		if d.Severity == diag.Error {
			msgs = append(msgs, fmt.Sprintf("%d:%d: error[%s]: %s", d.Pos.Line, d.Pos.Col, d.Code, d.Msg))
		}
	}
	return info, msgs
}

// run is what one backend did with one test input.
type run struct {
	backend string
	input   any // the input record as JSON values
	// pieces are the records the run made, kept or dropped, in order:
	// one (the input record) but for a policy with split.
	pieces []piece
}

// piece is one record a run made.
type piece struct {
	out spec.Result
	got any // the record after the run, as JSON values
	// view is, for an OTLP policy, the record after the run read back as
	// an expected view is (its view as JSON through DecodeOTLPView): a
	// removed or null fixed key is its default, ids are lower-case hex. It
	// is what an expected record is compared with; got when the view does
	// not read back.
	view any
}

// one is the run's only piece, or a note saying how many there were.
func (r run) one() (piece, string) {
	if len(r.pieces) != 1 {
		return piece{}, fmt.Sprintf("the run made %d records; write expect [ … ] to list them", len(r.pieces))
	}
	return r.pieces[0], ""
}

// NewInput builds the input record of test t of file f in arena a: the
// literal's keys in source order, tag from the test (or none), time TestNow.
// For an OTLP policy (schema otlp) the literal is the record's view
// (docs/otlp.md): missing keys take their defaults, and "time" gives %time.
func NewInput(f *policy.File, t *policy.Test, a *record.Arena) (*record.Record, error) {
	return newInput(f, t, t.Input, TestNow, a)
}

// newInput builds the record of input, given at now, of test t.
func newInput(f *policy.File, t *policy.Test, input policy.Expr, now time.Time, a *record.Arena) (*record.Record, error) {
	if input == nil {
		return nil, fmt.Errorf("test %q has no input", t.Name)
	}
	b, err := appendLitJSON(nil, input)
	if err != nil {
		return nil, fmt.Errorf("test %q: input: %v", t.Name, err)
	}
	rec, err := decodeInput(f, a, b)
	if err != nil {
		return nil, fmt.Errorf("test %q: input: %v", t.Name, err)
	}
	if t.Tag != nil {
		rec.SetTag([]byte(t.Tag.Str))
	}
	if !f.IsOTLP() || rec.Time() == 0 {
		rec.SetTime(now.UnixNano())
	}
	rec.Commit()
	return rec, nil
}

func decodeInput(f *policy.File, a *record.Arena, b []byte) (*record.Record, error) {
	if f.IsOTLP() {
		return a.DecodeOTLPView(b, record.Owned)
	}
	return a.DecodeJSON(b, record.Owned)
}

// want is the record test t expects, as JSON values: for an OTLP policy
// the expected view with its defaults filled in, as NewInput reads inputs
// (and as piece.view reads the result back, so that a removed fixed key
// meets its default and an id written in upper case its lower case).
func want(f *policy.File, lit policy.Expr) (any, error) {
	if !f.IsOTLP() {
		return LitValue(lit)
	}
	b, err := appendLitJSON(nil, lit)
	if err != nil {
		return nil, err
	}
	rec, err := record.NewArena().DecodeOTLPView(b, record.Owned)
	if err != nil {
		return nil, err
	}
	return Value(rec), nil
}

// runOne runs the inputs of t through rn in order, the clock set by the
// at and wait lines before each; r.input is the last input.
func runOne(rn backend.Program, f *policy.File, t *policy.Test, clock *testClock) (r run, err error) {
	inputs := t.Inputs
	if len(inputs) == 0 {
		inputs = []*policy.TestInput{{Pos: t.InputPos, Value: t.Input}}
	}
	clock.now = TestNow
	for _, in := range inputs {
		if err := clock.set(in.Clocks); err != nil {
			return r, fmt.Errorf("test %q: %v", t.Name, err)
		}
		if err := r.runInput(rn, f, t, in.Value, clock.now); err != nil {
			return r, err
		}
	}
	return r, nil
}

func (r *run) runInput(rn backend.Program, f *policy.File, t *policy.Test, input policy.Expr, now time.Time) (err error) {
	a := record.NewArena()
	rec, err := newInput(f, t, input, now, a)
	if err != nil {
		return err
	}
	r.input = Value(rec)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	// An error with a fault describes the fault (backend.Program); without
	// one it is the backend's own failure.
	pieces, err := backend.RunAll(rn, rec, nil)
	if err != nil && !(len(pieces) > 0 && pieces[len(pieces)-1].Result.Faulted()) {
		return err
	}
	for _, pc := range pieces {
		p := piece{out: pc.Result, got: Value(pc.Rec)}
		p.view = p.got
		if f.IsOTLP() {
			if v, err := record.NewArena().DecodeOTLPView(pc.Rec.AppendJSON(nil), record.Owned); err == nil {
				p.view = Value(v)
			}
		}
		r.pieces = append(r.pieces, p)
	}
	return nil
}

// meets checks r against the test's expectation and explains a miss.
func (r run) meets(f *policy.File, t *policy.Test) string {
	switch t.Expect {
	case policy.ExpectDropped:
		for _, p := range r.pieces {
			if p.out.Action != spec.Drop {
				return fmt.Sprintf("want the record dropped, got %s%s", p.out, recordNote(p))
			}
		}
	case policy.ExpectFault:
		p, msg := r.one()
		if msg != "" {
			return msg
		}
		if p.out.Fault == spec.NoFault {
			return fmt.Sprintf("want a fault, got %s%s", p.out, recordNote(p))
		}
		if p.out.Action == spec.Keep && !Equal(r.input, p.got) {
			return "the record changed although the run faulted (" + p.out.Fault.String() + ")\n" + Diff(r.input, p.got)
		}
	case policy.ExpectRecord:
		want, err := want(f, t.Want)
		if err != nil {
			return "bad expected record: " + err.Error()
		}
		p, msg := r.one()
		if msg != "" {
			return msg
		}
		if p.out.Action != spec.Keep || p.out.Fault != spec.NoFault {
			return fmt.Sprintf("want %s, got %s", JSON(want), p.out)
		}
		if !Equal(want, p.view) {
			return "the record differs from the expectation\n" + Diff(want, p.view)
		}
	case policy.ExpectRecords:
		return r.meetsRecords(f, t.Want.(*policy.ListLit).Elems)
	}
	return ""
}

// meetsRecords checks the records that came out of r, in order, against
// the list of expected records: faulted records that were kept come out
// too, as a fault leaves them.
func (r run) meetsRecords(f *policy.File, lits []policy.Expr) string {
	var kept []piece
	for _, p := range r.pieces {
		if p.out.Kept() {
			kept = append(kept, p)
		}
	}
	var msgs []string
	for i := 0; i < max(len(lits), len(kept)); i++ {
		switch {
		case i >= len(kept):
			w, _ := want(f, lits[i])
			msgs = append(msgs, fmt.Sprintf("record %d: missing, want %s", i+1, JSON(w)))
		case i >= len(lits):
			msgs = append(msgs, fmt.Sprintf("record %d: unexpected %s", i+1, JSON(kept[i].view)))
		default:
			w, err := want(f, lits[i])
			if err != nil {
				return fmt.Sprintf("bad expected record %d: %v", i+1, err)
			}
			if !Equal(w, kept[i].view) {
				msgs = append(msgs, fmt.Sprintf("record %d differs from the expectation\n%s", i+1, Diff(w, kept[i].view)))
			}
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	return fmt.Sprintf("want %s, got %d (%s)\n%s", records(len(lits)), len(kept), r.results(), strings.Join(msgs, "\n"))
}

func records(n int) string {
	if n == 1 {
		return "1 record"
	}
	return fmt.Sprintf("%d records", n)
}

// results lists the results of r's pieces.
func (r run) results() string {
	var s []string
	for _, p := range r.pieces {
		s = append(s, p.out.String())
	}
	return strings.Join(s, ", ")
}

func recordNote(p piece) string {
	if p.out.Action == spec.Keep {
		return ": " + JSON(p.got)
	}
	return ""
}

// agree compares the runs of two backends over the same input.
func agree(a, b run) string {
	if len(a.pieces) != len(b.pieces) {
		return fmt.Sprintf("backends disagree: [%s] made %d records (%s), [%s] %d (%s)", a.backend, len(a.pieces), a.results(), b.backend, len(b.pieces), b.results())
	}
	for i := range a.pieces {
		pa, pb := a.pieces[i], b.pieces[i]
		which := ""
		if len(a.pieces) > 1 {
			which = fmt.Sprintf(" (record %d)", i+1)
		}
		if pa.out != pb.out {
			return fmt.Sprintf("backends disagree%s: [%s] %s, [%s] %s", which, a.backend, pa.out, b.backend, pb.out)
		}
		if pa.out.Action == spec.Keep && !Equal(pa.got, pb.got) {
			var s strings.Builder
			s.WriteString(fmt.Sprintf("backends disagree on the record%s: want is [%s], got is [%s]\n", which, a.backend, b.backend))
			s.WriteString(Diff(pa.got, pb.got))
			return s.String()
		}
	}
	return ""
}
