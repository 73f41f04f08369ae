package tail

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/pipeline/checkpoint"
)

// TestUnmatchedPatterns checks that a pattern that matches nothing is
// warned of at start, once, and counted while it matches nothing.
func TestUnmatchedPatterns(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.log"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	cfg := fastConfig(filepath.Join(dir, "a.log"), filepath.Join(dir, "typo*.log"), filepath.Join(dir, "x*.log"))
	cfg.ExcludePaths = []string{filepath.Join(dir, "x1.log")}
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if err := os.WriteFile(filepath.Join(dir, "x1.log"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, cfg, nil)
	h.poll()
	if n := h.tail.Stats().UnmatchedPatterns; n != 2 {
		t.Errorf("unmatched = %d, want 2 (typo*.log, and x*.log whose match is excluded)", n)
	}
	if c := strings.Count(logs.String(), "path pattern matches no file"); c != 2 || !strings.Contains(logs.String(), "typo*.log") {
		t.Errorf("warnings:\n%s", logs.String())
	}
	// Once a file appears the pattern counts no more; no warning repeats.
	if err := os.WriteFile(filepath.Join(dir, "typo1.log"), []byte("t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for h.tail.Stats().UnmatchedPatterns != 1 && time.Now().Before(deadline) {
		h.poll()
	}
	if n := h.tail.Stats().UnmatchedPatterns; n != 1 {
		t.Errorf("unmatched after typo1.log = %d, want 1", n)
	}
	if c := strings.Count(logs.String(), "path pattern matches no file"); c != 2 {
		t.Errorf("%d warnings, want 2", c)
	}
}

// TestEmptyFingerprintEntry checks that a checkpoint entry with no
// fingerprint but an offset matches no file (an empty fingerprint is a
// prefix of every file) and is reported once: the file is read as new.
func TestEmptyFingerprintEntry(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.log"), []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	cfg := fastConfig(filepath.Join(dir, "*.log"))
	cfg.ExitOnEOF = true
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	cp := &checkpoint.Checkpoint{Files: []checkpoint.File{
		{Offset: 6, Path: filepath.Join(dir, "gone.log")},
		{Offset: 0, Path: filepath.Join(dir, "empty.log")}, // an empty file: fine
	}}
	h := newHarness(t, cfg, cp)
	h.drain()
	if got := strings.Join(h.text(), ","); got != "a.log:hello,a.log:world" {
		t.Errorf("lines %s, want a.log read from its start", got)
	}
	if c := strings.Count(logs.String(), "without a fingerprint"); c != 1 || !strings.Contains(logs.String(), "gone.log") {
		t.Errorf("warnings:\n%s", logs.String())
	}
}
