package vmtest

import (
	"fmt"
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

// stopped records the Fatalf that stops a test, in place of stopping it.
type stopped struct {
	testing.TB
	msg string
}

func (s *stopped) Helper() {}

func (s *stopped) Fatalf(format string, args ...any) {
	s.msg = fmt.Sprintf(format, args...)
	panic(s)
}

// TestOpsWithoutCode: a disassembly without its code section stops the
// test; counting nothing there would pass every "never emitted" check.
func TestOpsWithoutCode(t *testing.T) {
	s := &stopped{TB: t}
	func() {
		defer func() { recover() }()
		Ops(s, text("policy \"p\": 1 instructions\ncode: (1)\n     0  SET     p0 .x, r0\n"))
	}()
	if !strings.Contains(s.msg, "no code section") {
		t.Errorf("Ops went on without a code section (stopped with %q)", s.msg)
	}
}
