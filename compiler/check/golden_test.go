package check

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/internal/testkit/golden"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/spec"
)

// checkSource parses and checks src as the check command does, or, when
// src has lines "# --param name=value" (or "# --params none"), with those
// values, as eval does.
func checkSource(name string, src []byte) (*Info, []diag.Diagnostic) {
	f, errs := policy.ParseFile(name, src)
	ds := diag.FromSyntax(name, errs)
	var info *Info
	if f != nil {
		var more []diag.Diagnostic
		params, bound := paramsIn(src)
		info, more = Config{Params: params, Bound: bound, Imports: testImports(f)}.Check(f)
		ds = append(ds, more...)
	}
	return info, diag.Sort(ds)
}

// paramsIn reads the parameter values a test source gives in comments.
func paramsIn(src []byte) (spec.Params, bool) {
	params, bound := spec.Params{}, false
	for _, line := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(line, "# --param") {
			continue
		}
		bound = true
		if name, value, ok := strings.Cut(strings.TrimPrefix(line, "# --param "), "="); ok {
			params[name] = spec.Param{Value: value, Raw: true, Where: "--param " + name}
		}
	}
	return params, bound
}

// TestGolden checks every testdata/*.policy and compares the rendered
// diagnostics with its .golden file (empty for clean policies).
func TestGolden(t *testing.T) {
	golden.Files(t, "testdata/*.policy", ".golden", func(t *testing.T, file string, src []byte) []byte {
		_, ds := checkSource(filepath.Base(file), src)
		var b bytes.Buffer
		if err := diag.WriteText(&b, src, ds); err != nil {
			t.Fatal(err)
		}
		// Clean policies (named ok_*) must stay clean, and every
		// mistake file must report something.
		clean := strings.HasPrefix(filepath.Base(file), "ok_")
		if clean && len(ds) > 0 {
			t.Errorf("clean policy has %d diagnostics", len(ds))
		}
		if !clean && len(ds) == 0 {
			t.Errorf("no diagnostics for a mistake file")
		}
		return b.Bytes()
	})
}

// testModules are the modules the tests' sources may import, by path
// (package compiler tests the loader that reads them from files).
var testModules = map[string]string{
	"net.policy": `module "net"
const marker = "[ip]"
fn mask_ip(ip: string) string {
  return ip
}
fn has_re(s: string, re: string) bool {
  return matches(s, re)
}
fn clock(t: timestamp, tz: string) string {
  return format_time(t, "%H:%M", tz)
}
`,
	"net2.policy": `module "net"
const other = 1
`,
}

// testImports checks the modules f imports from testModules.
func testImports(f *policy.File) Imports {
	imports := Imports{}
	for _, d := range f.Imports {
		src, ok := testModules[d.Path.Str]
		if !ok {
			continue
		}
		mf, errs := policy.ParseFile(d.Path.Str, []byte(src))
		if len(errs) > 0 {
			panic(errs)
		}
		m, ds := CheckModule(mf, d.Path.Str, testImports(mf))
		if len(ds) > 0 {
			panic(ds)
		}
		imports[d] = m
	}
	return imports
}
