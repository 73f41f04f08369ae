// Package vmtest is for tests of programs: it lists a program's ops and
// counts its instructions of one op from its disassembly, so that a test
// can state what an optimisation must leave, and runs a program over a
// JSON line. It imports record and spec, the leaves, so that any package's
// tests may use it.
package vmtest

import (
	"io"
	"strconv"
	"strings"
	"testing"
)

// A Disassembler writes its program readably, one line per instruction
// with the op in its second field, as vm.Program.Disasm does.
type Disassembler interface {
	Disasm(w io.Writer) error
}

// Ops returns the op of each of prog's instructions in order (not of
// the edits of an EDITS run, which the disassembly lists under it without
// an index), stopping the test when the disassembly cannot be written.
func Ops(t testing.TB, prog Disassembler) []string {
	t.Helper()
	var b strings.Builder
	if err := prog.Disasm(&b); err != nil {
		t.Fatal(err)
	}
	_, code, ok := strings.Cut(b.String(), "\ncode:\n")
	if !ok {
		// A count of 0 over no code would pass every "never emitted" check.
		t.Fatalf("the disassembly has no code section:\n%s", b.String())
	}
	var ops []string
	for _, l := range strings.Split(code, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		if _, err := strconv.Atoi(f[0]); err == nil {
			ops = append(ops, f[1])
		}
	}
	return ops
}

// CountOp returns how many instructions of op prog has, stopping the test
// when the disassembly cannot be written.
func CountOp(t testing.TB, prog Disassembler, op string) int {
	t.Helper()
	n := 0
	for _, o := range Ops(t, prog) {
		if o == op {
			n++
		}
	}
	return n
}
