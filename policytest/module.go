package policytest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// RunModule runs the tests of the module file f, whose text is src, on
// every backend, and returns one Result per test in source order. A
// module runs no records, so each test becomes a policy of its own: the
// module's declarations as they are (module and policy are both six
// letters, so every position stays put), then `set .aN = (C)` for each
// assert C, run over an empty record. An assert passes when its value is
// true on every backend; false, a fault or a backend failure fails it.
func RunModule(src []byte, f *policy.File, backends []backend.Backend, opts ...compiler.Option) []Result {
	var out []Result
	for _, t := range f.Tests {
		if t == nil {
			continue
		}
		res := Result{File: f.Filename, Test: t}
		res.Failures = runAsserts(src, f, t, backends, opts)
		out = append(out, res)
	}
	return out
}

// assertKey is the field the policy of a test sets to the value of its
// i-th assert.
func assertKey(i int) string { return "a" + strconv.Itoa(i) }

// assertPolicy is the policy that computes the asserts of t, a test of
// the module f with the text src.
func assertPolicy(src []byte, f *policy.File, t *policy.Test) []byte {
	end := len(src)
	if len(f.Tests) > 0 {
		end = f.Tests[0].Pos().Offset
	}
	var b strings.Builder
	b.Write(src[:f.Policy.Offset])
	b.WriteString("policy")
	b.Write(src[f.Policy.Offset+len("module") : end])
	b.WriteString("\n")
	for i, a := range t.Asserts {
		fmt.Fprintf(&b, "set .%s = (%s)\n", assertKey(i), src[a.Cond.Pos().Offset:a.Cond.End().Offset])
	}
	return []byte(b.String())
}

func runAsserts(src []byte, f *policy.File, t *policy.Test, backends []backend.Backend, opts []compiler.Option) []string {
	pf, info, diags := compiler.CheckFile(f.Filename, assertPolicy(src, f, t), opts...)
	if diags.HasErrors() {
		return []string{"the test's asserts do not compile: " + diags.Err().Error()}
	}
	var msgs []string
	for _, b := range backends {
		p, err := b.Load(pf, info, TestOptions())
		if err != nil {
			msgs = append(msgs, fmt.Sprintf("[%s] cannot load the asserts: %v", b.Name, err))
			continue
		}
		rec, err := record.NewArena().DecodeJSON([]byte("{}"), record.Owned)
		if err != nil {
			panic(err)
		}
		rec.SetTime(TestNow.UnixNano())
		rec.Commit()
		r, err := p.Run(rec)
		switch {
		case r.Fault != spec.NoFault:
			msgs = append(msgs, fmt.Sprintf("[%s] the asserts fault: %s", b.Name, r))
			continue
		case err != nil:
			msgs = append(msgs, fmt.Sprintf("[%s] %v", b.Name, err))
			continue
		}
		got := rec.ToGo()
		for i, a := range t.Asserts {
			if v := got[assertKey(i)]; v != true {
				msgs = append(msgs, fmt.Sprintf("[%s] line %d: assert %s is %s", b.Name, a.Pos().Line, src[a.Cond.Pos().Offset:a.Cond.End().Offset], JSON(v)))
			}
		}
	}
	return msgs
}
