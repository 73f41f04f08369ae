package tail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/pipeline/checkpoint"
)

// fastConfig is a Config with intervals short enough for tests.
func fastConfig(paths ...string) Config {
	return Config{
		Paths:           paths,
		ReadFromHead:    true,
		PollInterval:    5 * time.Millisecond,
		RefreshInterval: 40 * time.Millisecond,
		RotateWait:      150 * time.Millisecond,
		FlushTimeout:    60 * time.Millisecond,
	}
}

// A harness polls a Tail, records every line as "name:text" and commits
// each batch, as the pipeline does once outputs accept it.
type harness struct {
	t      *testing.T
	tail   *Tail
	lines  []Line // copies
	noAuto bool   // do not commit
}

func newHarness(t *testing.T, cfg Config, cp *checkpoint.Checkpoint) *harness {
	t.Helper()
	tl, err := New(cfg, cp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	return &harness{t: t, tail: tl}
}

// poll runs one cycle and returns the number of lines; io.EOF is returned
// as is.
func (h *harness) poll() (int, error) {
	h.t.Helper()
	b, err := h.tail.Poll(context.Background())
	if err != nil {
		return 0, err
	}
	for _, l := range b.Lines {
		l.Bytes = append([]byte(nil), l.Bytes...)
		h.lines = append(h.lines, l)
	}
	if !h.noAuto {
		h.tail.Commit(b.Cursor)
	}
	return len(b.Lines), nil
}

// step runs one poll cycle, failing the test on an error.
func (h *harness) step() {
	h.t.Helper()
	if _, err := h.poll(); err != nil {
		h.t.Fatalf("Poll: %v", err)
	}
}

// until polls until cond holds, failing the test after a deadline.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s; have %d lines", what, len(h.lines))
		}
		if _, err := h.poll(); err != nil {
			h.t.Fatalf("Poll: %v", err)
		}
	}
}

// drain polls until io.EOF (ExitOnEOF must be set).
func (h *harness) drain() {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := h.poll(); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			h.t.Fatal(err)
		}
	}
	h.t.Fatal("no EOF before the deadline")
}

// text returns the lines as "name:text".
func (h *harness) text() []string {
	var s []string
	for _, l := range h.lines {
		s = append(s, l.File.Name+":"+string(l.Bytes))
	}
	return s
}

// count returns how often each line text was seen.
func (h *harness) count() map[string]int {
	m := map[string]int{}
	for _, l := range h.lines {
		m[string(l.Bytes)]++
	}
	return m
}

// numbered returns lines "prefix-000000" … for i in [from, to).
func numbered(prefix string, from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "%s-%06d\n", prefix, i)
	}
	return b.String()
}

// missing lists the numbered lines not seen.
func missing(seen map[string]int, prefix string, n int) []string {
	var out []string
	for i := range n {
		if k := fmt.Sprintf("%s-%06d", prefix, i); seen[k] == 0 {
			out = append(out, k)
		}
	}
	return out
}

// withDefaults returns c with its defaults filled in.
func (c Config) withDefaults(t *testing.T) Config {
	t.Helper()
	if err := c.setDefaults(); err != nil {
		t.Fatal(err)
	}
	return c
}
