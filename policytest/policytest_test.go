package policytest

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// fixedProgram does the same thing to every record, so that the harness
// itself can be tested without a compiler.
type fixedProgram struct {
	out spec.Result
	set string // a key set to true when kept
}

func (p fixedProgram) Run(rec *record.Record) (spec.Result, error) {
	if p.set != "" && p.out.Fault == spec.NoFault {
		if err := rec.Set(record.NewPath(p.set), record.BoolValue(true)); err != nil {
			return spec.Result{}, err
		}
		rec.Commit()
	}
	return p.out, nil
}

func fixed(name string, p fixedProgram) backend.Backend {
	return backend.Backend{Name: name, Load: func(*policy.File, *check.Info, spec.Options) (backend.Program, error) {
		return p, nil
	}}
}

const src = `policy "p"
test "kept" {
  input  {"a": 1, "b": [1.5, "x"], "c": {"d": null}}
  tag    "t"
  expect {"c": {"d": null}, "b": [1.5, "x"], "a": 1, "seen": true}
}
test "dropped" {
  input  {}
  expect dropped
}
test "faulted" {
  input  {"x": 2}
  expect fault
}
`

// load parses and checks src, stopping the test on an error.
func load(t *testing.T, src string) (*policy.File, *check.Info) {
	t.Helper()
	f, errs := policy.ParseFile("p.policy", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	info, diags := check.Check(f)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return f, info
}

func TestRunFile(t *testing.T) {
	f, info := load(t, src)
	keep := fixed("keep", fixedProgram{set: "seen"})
	drop := fixed("drop", fixedProgram{out: spec.Result{Action: spec.Drop}})
	fault := fixed("fault", fixedProgram{out: spec.Result{Fault: spec.TypeMismatch}})
	tests := []struct {
		backends []backend.Backend
		passed   []bool // kept, dropped, faulted
	}{
		{[]backend.Backend{keep}, []bool{true, false, false}},
		{[]backend.Backend{drop}, []bool{false, true, false}},
		{[]backend.Backend{fault}, []bool{false, false, true}},
		{[]backend.Backend{fault, fixed("fault2", fixedProgram{out: spec.Result{Fault: spec.DivisionByZero}})}, []bool{false, false, false}},
	}
	for _, tt := range tests {
		res := RunFile(f, info, tt.backends)
		if len(res) != 3 {
			t.Fatalf("got %d results", len(res))
		}
		for i, r := range res {
			if r.Passed() != tt.passed[i] {
				t.Errorf("%s with %s: passed = %v, want %v: %v", r.Name(), tt.backends[0].Name, r.Passed(), tt.passed[i], r.Failures)
			}
		}
	}
}

func TestDiff(t *testing.T) {
	want := map[string]any{"a": int64(1), "b": map[string]any{"c": "x"}, "gone": true}
	got := map[string]any{"a": 1.0, "b": map[string]any{"c": "y"}, "new": nil}
	d := Diff(want, got)
	for _, s := range []string{".a: want 1 (int), got 1.0 (float)", `.b.c: want "x" (string), got "y" (string)`, ".gone: missing", ".new: unexpected null"} {
		if !strings.Contains(d, s) {
			t.Errorf("diff lacks %q:\n%s", s, d)
		}
	}
	if Equal(want, got) || !Equal(want, map[string]any{"gone": true, "b": map[string]any{"c": "x"}, "a": int64(1)}) {
		t.Error("Equal is wrong")
	}
}

func TestNewInput(t *testing.T) {
	f, _ := load(t, src)
	a := record.NewArena()
	rec, err := NewInput(f, f.Tests[0], a)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(rec.AppendJSON(nil)); got != `{"a":1,"b":[1.5,"x"],"c":{"d":null}}` {
		t.Errorf("input = %s", got)
	}
	if string(rec.Tag()) != "t" || rec.Time() != TestNow.UnixNano() || rec.Edited() {
		t.Errorf("tag %q time %d edited %v", rec.Tag(), rec.Time(), rec.Edited())
	}
}

// editProgram edits every record with edit.
type editProgram func(*record.Record) error

func (p editProgram) Run(rec *record.Record) (spec.Result, error) {
	if err := p(rec); err != nil {
		return spec.Result{}, err
	}
	rec.Commit()
	return spec.Result{}, nil
}

// An OTLP record is compared with the expected view as that view is read
// (docs/otlp.md): a removed fixed key meets its default, an id written in
// upper case its lower case; what differs as a LogRecord still fails.
func TestOTLPView(t *testing.T) {
	const src = `policy "p"
schema otlp
test "defaults and ids" {
  input  {"severity_text": "x", "event_name": "e", "resource": {"schema_url": "u"}}
  expect {"event_name": "e", "trace_id": "0102030405060708090a0b0c0d0e0f1a"}
}
test "a removed key is not its old value" {
  input  {"severity_text": "x", "event_name": "e", "resource": {"schema_url": "u"}}
  expect {"severity_text": "x", "event_name": "e", "resource": {"schema_url": "u"}, "trace_id": "0102030405060708090a0b0c0d0e0f1a"}
}
`
	f, info := load(t, src)
	edit := editProgram(func(rec *record.Record) error {
		rec.Remove(record.NewPath("severity_text"))
		rec.Remove(record.NewPath("resource", "schema_url"))
		return rec.Set(record.NewPath("trace_id"), rec.Arena().NewString([]byte("0102030405060708090A0B0C0D0E0F1A")))
	})
	b := backend.Backend{Name: "edit", Load: func(*policy.File, *check.Info, spec.Options) (backend.Program, error) {
		return edit, nil
	}}
	res := RunFile(f, info, []backend.Backend{b})
	if len(res) != 2 {
		t.Fatalf("got %d results", len(res))
	}
	if !res[0].Passed() {
		t.Errorf("%s: %v", res[0].Name(), res[0].Failures)
	}
	if res[1].Passed() {
		t.Errorf("%s passed", res[1].Name())
	}
}

// pieceProgram makes of each record one piece per element of its "a",
// the element at "a", as a split does; an "a" of [] drops the record.
type pieceProgram struct{ dropSecond bool }

func (p pieceProgram) Run(rec *record.Record) (spec.Result, error) {
	panic("pieceProgram runs with RunPieces")
}

func (p pieceProgram) RunPieces(rec *record.Record, dst []backend.Piece) ([]backend.Piece, error) {
	a := rec.Arena()
	arr, _ := rec.Get(record.NewPath("a"))
	if a.Len(arr) == 0 {
		return append(dst, backend.Piece{Rec: rec, Result: spec.Result{Action: spec.Drop}}), nil
	}
	for i := range a.Len(arr) {
		el, _ := a.Index(arr, i)
		r := a.NewRecordLike(rec)
		if err := r.Set(record.NewPath("a"), el); err != nil {
			return dst, err
		}
		res := spec.Result{}
		if p.dropSecond && i == 1 {
			res.Action = spec.Drop
		}
		dst = append(dst, backend.Piece{Rec: r, Result: res})
	}
	return dst, nil
}

func TestExpectRecords(t *testing.T) {
	const src = `policy "p"
test "two" {
  input  {"a": [1, 2]}
  expect [{"a": 1}, {"a": 2}]
}
test "none" {
  input  {"a": []}
  expect []
}
test "one record expected, two made" {
  input  {"a": [1, 2]}
  expect {"a": 1}
}
test "order matters" {
  input  {"a": [1, 2]}
  expect [{"a": 2}, {"a": 1}]
}
test "too few" {
  input  {"a": [1, 2, 3]}
  expect [{"a": 1}, {"a": 2}]
}
test "dropped, every piece" {
  input  {"a": []}
  expect dropped
}
`
	f, info := load(t, src)
	prog := func(name string, p pieceProgram) backend.Backend {
		return backend.Backend{Name: name, Load: func(*policy.File, *check.Info, spec.Options) (backend.Program, error) {
			return p, nil
		}}
	}
	tests := []struct {
		backends []backend.Backend
		passed   []bool
		failure  string // in the failures of the first test, when it fails
	}{
		{[]backend.Backend{prog("a", pieceProgram{})}, []bool{true, true, false, false, false, true}, ""},
		{[]backend.Backend{prog("a", pieceProgram{dropSecond: true})}, []bool{false, true, false, false, false, true}, "record 2: missing"},
		{[]backend.Backend{prog("a", pieceProgram{}), prog("b", pieceProgram{dropSecond: true})}, []bool{false, true, false, false, false, true}, "backends disagree (record 2)"},
	}
	for _, tt := range tests {
		res := RunFile(f, info, tt.backends)
		if len(res) != len(tt.passed) {
			t.Fatalf("got %d results", len(res))
		}
		for i, r := range res {
			if r.Passed() != tt.passed[i] {
				t.Errorf("%s with %d backends: passed = %v, want %v: %v", r.Name(), len(tt.backends), r.Passed(), tt.passed[i], r.Failures)
			}
		}
		if tt.failure != "" && !strings.Contains(strings.Join(res[0].Failures, "\n"), tt.failure) {
			t.Errorf("failures %q lack %q", res[0].Failures, tt.failure)
		}
	}
	if msg := strings.Join(res0(t, f, info, prog("a", pieceProgram{}))[2].Failures, "\n"); !strings.Contains(msg, "made 2 records; write expect [ … ]") {
		t.Errorf("expect {…} of two records: %q", msg)
	}
}

func res0(t *testing.T, f *policy.File, info *check.Info, b backend.Backend) []Result {
	t.Helper()
	return RunFile(f, info, []backend.Backend{b})
}
