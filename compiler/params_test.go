package compiler_test

import (
	"errors"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/lua"
	"github.com/policyrun/policyrun/spec"
)

// A policy whose parameter has no value yet checks clean, and no backend
// compiles it until the value is given: then both do.
func TestUnboundParams(t *testing.T) {
	src := []byte("policy \"p\"\nparam env: string\nset .env = env\n")
	an := compiler.Analyze("p.policy", src)
	if len(an.Diagnostics) > 0 || an.Program != nil {
		t.Fatalf("analyze: %v, program %v", an.Diagnostics, an.Program)
	}
	if _, err := compiler.Compile(an.File, an.Info); !errors.Is(err, check.ErrUnbound) {
		t.Errorf("vm: %v", err)
	}
	if _, err := lua.Compile(an.File, an.Info, spec.Options{}); !errors.Is(err, check.ErrUnbound) {
		t.Errorf("lua: %v", err)
	}
	params := spec.Params{"env": {Value: "prod"}}
	f, info, ds := compiler.CheckFileParams("p.policy", src, params)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	if _, err := compiler.Compile(f, info); err != nil {
		t.Errorf("vm with the value: %v", err)
	}
	if _, err := lua.Compile(f, info, spec.Options{}); err != nil {
		t.Errorf("lua with the value: %v", err)
	}
	if _, ds := compiler.CompileFile("p.policy", src); ds.Err() == nil {
		t.Error("CompileFile without the value: no error")
	}
	if _, ds := compiler.CompileFile("p.policy", src, compiler.WithParams(params)); ds.Err() != nil {
		t.Errorf("CompileFile with the value: %v", ds.Err())
	}
}
