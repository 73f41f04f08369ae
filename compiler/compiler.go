// Package compiler lowers checked policies to bytecode for the vm package:
// typed instructions, precomputed paths, folded constants, compiled regexes
// and sets, and the test-block adapter for the VM backend.
package compiler

import (
	"fmt"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/vm"
)

// Diagnostic is an error or warning about a policy (syntax or type).
type Diagnostic = diag.Diagnostic

// CompileFile parses, checks and compiles one policy file. The diagnostics
// are every syntax and type error and warning, sorted; the Program is nil
// when any of them is an error.
func CompileFile(filename string, src []byte) (*vm.Program, []Diagnostic) {
	f, info, diags := CheckFile(filename, src)
	if diag.HasErrors(diags) {
		return nil, diags
	}
	prog, err := Compile(f, info)
	if err != nil {
		d := Diagnostic{Code: check.CodeCompile, Severity: diag.Error, Pos: f.Pos(), End: f.Pos(),
			Msg: err.Error(), Filename: filename}
		return nil, append(diags, d)
	}
	return prog, diags
}

// CheckFile parses and checks one policy file, for callers that compile
// for other backends too. The File and Info are nil after syntax errors.
func CheckFile(filename string, src []byte) (*policy.File, *check.Info, []Diagnostic) {
	f, errs := policy.ParseFile(filename, src)
	if len(errs) > 0 {
		return nil, nil, diag.Sort(diag.FromSyntax(filename, errs))
	}
	info, diags := check.Check(f)
	return f, info, diags
}

// Compile lowers f, checked without errors into info, to a Program.
func Compile(f *policy.File, info *check.Info) (prog *vm.Program, err error) {
	defer func() {
		if p := recover(); p != nil {
			ce, ok := p.(compileError)
			if !ok {
				panic(p)
			}
			prog, err = nil, ce
		}
	}()
	g := newGen(f, info)
	g.stmts(f.Stmts)
	g.emit(f.EOF, vm.KEEP, 0, 0, 0, 0)
	return g.finish()
}

// compileError is raised (by panic) deep in the generator and returned by
// Compile: limits such as 65,536 registers.
type compileError string

func (e compileError) Error() string { return string(e) }

func failf(format string, args ...any) { panic(compileError(fmt.Sprintf(format, args...))) }
