// Package vmtest is for tests of programs: it counts a program's
// instructions of one op in its disassembly, so that a test can state what
// an optimisation must leave, and runs a program over a JSON line. It
// imports record and spec, the leaves, so that any package's tests may use it.
package vmtest

import (
	"io"
	"strings"
	"testing"
)

// A Disassembler writes its program readably, one line per instruction
// with the op in its second field, as vm.Program.Disasm does.
type Disassembler interface {
	Disasm(w io.Writer) error
}

// CountOp returns how many instructions of op prog has, stopping the test
// when the disassembly cannot be written.
func CountOp(t testing.TB, prog Disassembler, op string) int {
	t.Helper()
	var b strings.Builder
	if err := prog.Disasm(&b); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[1] == op {
			n++
		}
	}
	return n
}
