package lua

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
)

// testNow is now() and %time in test blocks (docs/semantics.md).
var testNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// literal converts a constant literal of a test block to Go values.
func literal(e policy.Expr) any {
	switch x := e.(type) {
	case *policy.ParenExpr:
		return literal(x.X)
	case *policy.BasicLit:
		switch x.Kind {
		case policy.LitNull:
			return nil
		case policy.LitBool:
			return x.Bool
		case policy.LitInt:
			return x.Int
		case policy.LitFloat:
			return x.Float
		case policy.LitString:
			return x.Str
		}
	case *policy.UnaryExpr:
		switch v := literal(x.X).(type) {
		case int64:
			return -v
		case float64:
			return -v
		}
	case *policy.ListLit:
		out := []any{}
		for _, el := range x.Elems {
			out = append(out, literal(el))
		}
		return out
	case *policy.MapLit:
		out := map[string]any{}
		for _, en := range x.Entries {
			out[en.Key.Str] = literal(en.Value)
		}
		return out
	}
	panic(fmt.Sprintf("not a literal: %T", e))
}

// litValue builds a constant literal in the arena, keeping key order.
func litValue(a *record.Arena, e policy.Expr) record.Value {
	switch x := e.(type) {
	case *policy.ListLit:
		b := a.BeginArray(len(x.Elems))
		for _, el := range x.Elems {
			b.Append(litValue(a, el))
		}
		return b.Finish()
	case *policy.MapLit:
		b := a.BeginMap(len(x.Entries))
		for _, en := range x.Entries {
			b.AddKey([]byte(en.Key.Str), litValue(a, en.Value))
		}
		return b.Finish()
	}
	v, err := a.FromGo(literal(e))
	if err != nil {
		panic(err)
	}
	return v
}

// litRecord returns a new record holding the literal map e.
func litRecord(a *record.Arena, e policy.Expr) *record.Record {
	r := a.NewRecord()
	if err := r.Set(nil, litValue(a, e)); err != nil {
		panic(err)
	}
	r.Commit()
	return r
}

// parseCheck parses and checks a policy that must have no errors.
func parseCheck(t testing.TB, name string, src []byte) (*policy.File, *check.Info) {
	t.Helper()
	f, errs := policy.ParseFile(name, src)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", name, errs)
	}
	info, diags := check.Check(f)
	for _, d := range diags {
		if d.Severity == diag.Error {
			t.Fatalf("%s: %v", name, d)
		}
	}
	return f, info
}

// compileFile parses, checks and transpiles a policy.
func compileFile(t testing.TB, name string, src []byte) (*policy.File, *Program) {
	t.Helper()
	f, info := parseCheck(t, name, src)
	p, err := Compile(f, info)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f, p
}

// runTest runs one test block and returns "" or what went wrong.
func runTest(r *Runner, f *policy.File, tc *policy.Test) string {
	a := record.NewArena()
	in := litRecord(a, tc.Input)
	in.SetTime(testNow.UnixNano())
	if tc.Tag != nil {
		in.SetTag([]byte(tc.Tag.Str))
	}
	in.Commit()
	before := string(in.AppendJSON(nil))
	res, err := r.Run(in)
	if err != nil {
		return "backend error: " + err.Error()
	}
	got := string(in.AppendJSON(nil))
	switch tc.Expect {
	case policy.ExpectDropped:
		if res.Action != Drop && !res.Dropped {
			return fmt.Sprintf("want dropped, got %v %s %s", res.Action, res.Reason, got)
		}
	case policy.ExpectFault:
		if res.Action != Fault || res.Dropped {
			return fmt.Sprintf("want fault, got %v %s", res.Action, got)
		}
		if got != before {
			return "a fault changed the record: " + got
		}
	case policy.ExpectRecord:
		if res.Action != Keep {
			return fmt.Sprintf("want a record, got %v %s", res.Action, res.Reason)
		}
		// Compared as JSON: timestamps and bytes are strings there.
		want := litRecord(a, tc.Want)
		back, err := a.DecodeJSON([]byte(got), record.Owned)
		if err != nil {
			return err.Error()
		}
		if !record.ValueEqual(a, back.Root(), a, want.Root()) {
			return fmt.Sprintf("got  %s\nwant %s", got, want.AppendJSON(nil))
		}
	}
	return ""
}

func TestConformanceCases(t *testing.T) {
	files, _ := filepath.Glob("../conformance/cases/*.policy")
	if len(files) == 0 {
		t.Skip("no conformance cases")
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, p := compileFile(t, file, src)
			r, err := p.NewRunner()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			r.Now = func() time.Time { return testNow }
			for _, tc := range f.Tests {
				if msg := runTest(r, f, tc); msg != "" {
					t.Errorf("test %q: %s", tc.Name, msg)
				}
			}
			if t.Failed() {
				t.Logf("Lua source:\n%s", p.Source)
			}
		})
	}
}
