package vmtest

import (
	"io"
	"testing"
)

type text string

func (s text) Disasm(w io.Writer) error {
	_, err := io.WriteString(w, string(s))
	return err
}

func TestCountOp(t *testing.T) {
	prog := text(`policy "p" on_fault keep: 3 instructions, 2 registers (0 constants)
code:
  ; line 2
     0  GETG    r0, p0 .a
     1  GET     r1, p1 .b
     2  GETG    r1, p2 .c
`)
	for op, want := range map[string]int{"GETG": 2, "GET": 1, "SET": 0, "r0,": 0} {
		if got := CountOp(t, prog, op); got != want {
			t.Errorf("CountOp(%s) = %d, want %d", op, got, want)
		}
	}
}
