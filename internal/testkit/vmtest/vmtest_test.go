package vmtest

import (
	"io"
	"strings"
	"testing"
)

type text string

func (s text) Disasm(w io.Writer) error {
	_, err := io.WriteString(w, string(s))
	return err
}

func TestCountOp(t *testing.T) {
	prog := text(`policy "p" on_fault keep: 4 instructions, 2 registers (1 constants)
constants:
  r0    1
paths:
  p0    .a
code:
  ; line 2
     0  GETG    r0, p0 .a
     1  GET     r1, p1 .b
     2  EDITS   0, 2
          SET     p0 .x, r0
          REMOVE  p1 .b
  ; line 3
     3  GETG    r1, p2 .c
`)
	if got, want := strings.Join(Ops(t, prog), " "), "GETG GET EDITS GETG"; got != want {
		t.Errorf("Ops = %s, want %s", got, want)
	}
	for op, want := range map[string]int{"GETG": 2, "GET": 1, "EDITS": 1, "SET": 0, "REMOVE": 0, "r0,": 0, "1": 0} {
		if got := CountOp(t, prog, op); got != want {
			t.Errorf("CountOp(%s) = %d, want %d", op, got, want)
		}
	}
}
