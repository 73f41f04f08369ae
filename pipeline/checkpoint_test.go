package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/pipeline/checkpoint"
)

func TestCorruptCheckpointStartsFromHead(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.log", "one\ntwo\n")
	writeFile(t, dir, "tail.db", "\x01\x02\x03")
	cfg := tailConfig(t, dir, toStdout, "a.log", "exit_on_eof: true", "poll_interval: 10ms", "db: tail.db")
	var out bytes.Buffer
	p := runPipeline(t, cfg, Options{Stdout: &out})
	if out.String() != "{\"log\":\"one\"}\n{\"log\":\"two\"}\n" {
		t.Errorf("output = %q", out.String())
	}
	if p.stats.BadCheckpoints.Load() != 1 {
		t.Error("the corrupt checkpoint was not counted")
	}
	if sum := summaryText(p.Summary()); !strings.Contains(sum, "checkpoint errors: unreadable 1, not saved 0\n") {
		t.Errorf("the summary does not report the corrupt checkpoint:\n%s", sum)
	}
}

// TestJSONCheckpointUpgraded: a checkpoint in the older JSON layout is
// resumed from and rewritten as protobuf by the next save.
func TestJSONCheckpointUpgraded(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.log", "one\ntwo\n")
	cfg := tailConfig(t, dir, toNull, "a.log", "exit_on_eof: true", "poll_interval: 10ms", "db: tail.db")
	if s := runPipeline(t, cfg, Options{}).Summary(); s.In != 2 {
		t.Fatalf("first run read %d records", s.In)
	}
	cp, _, err := checkpoint.Decode([]byte(readFile(t, dir, "tail.db")))
	if err != nil {
		t.Fatal(err)
	}
	enc := checkpoint.Encoder{Format: checkpoint.JSON}
	js, err := enc.Encode(cp)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "tail.db", string(js))
	appendFile(t, dir, "a.log", "three\n")
	if s := runPipeline(t, cfg, Options{}).Summary(); s.In != 1 {
		t.Fatalf("run from the JSON checkpoint read %d records, want 1", s.In)
	}
	if _, format, err := checkpoint.Decode([]byte(readFile(t, dir, "tail.db"))); err != nil || format != checkpoint.Protobuf {
		t.Errorf("checkpoint after the run: format %v, err %v; want protobuf", format, err)
	}
}

// TestCheckpointDirMissing checks that a db in a directory that does not
// exist stops the pipeline at start, rather than warning at every batch.
func TestCheckpointDirMissing(t *testing.T) {
	dir := t.TempDir()
	cfg := tailConfig(t, dir, toNull, "a.log", "db: state/tail.db")
	p, err := New(cfg, Options{})
	if err == nil {
		p.Close()
		t.Fatal("New accepted a db in a missing directory")
	}
	if !strings.Contains(err.Error(), "input at line 4: db state/tail.db: its directory does not exist") {
		t.Errorf("error = %v", err)
	}
}

// TestCheckpointDirNotWritable checks that a db whose directory cannot be
// written stops the pipeline at start (and run --check), rather than
// warning at every batch's save.
func TestCheckpointDirNotWritable(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ro", "tail.db")
	if err := os.Mkdir(filepath.Dir(db), 0o555); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// Permissions do not stop root: /proc takes no new files.
		if fi, err := os.Stat("/proc/self"); err != nil || !fi.IsDir() {
			t.Skip("running as root without /proc")
		}
		db = "/proc/policyrun-test-tail.db"
	}
	for _, check := range []bool{false, true} {
		cfg := tailConfig(t, dir, toNull, "a.log", "db: "+db)
		p, err := New(cfg, Options{Check: check})
		if err == nil {
			p.Close()
			t.Fatalf("check=%v: New accepted a db in a directory it cannot write", check)
		}
		if !strings.Contains(err.Error(), "input at line 4: db "+db+": checkpoint: cannot write in the directory") {
			t.Errorf("check=%v: error = %v", check, err)
		}
	}
	// A db that is a directory cannot be replaced by a rename.
	cfg := tailConfig(t, dir, toNull, "a.log", "db: "+dir)
	if p, err := New(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		if p != nil {
			p.Close()
		}
		t.Errorf("db a directory: %v", err)
	}
}

// TestStaleCheckpointTempFiles checks that the temporary files of saves a
// kill interrupted are removed at start (not by run --check), and no other
// file is.
func TestStaleCheckpointTempFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".tail.db.tmp123", ".tail.db.tmp", ".other.db.tmp1", "tail.db.tmp9"} {
		writeFile(t, dir, name, "x")
	}
	cfg := tailConfig(t, dir, toNull, "a.log", "db: tail.db")
	p, err := New(cfg, Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if _, err := os.Stat(filepath.Join(dir, ".tail.db.tmp123")); err != nil {
		t.Errorf("run --check removed a temporary file: %v", err)
	}
	p, err = New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	for name, want := range map[string]bool{".tail.db.tmp123": false, ".tail.db.tmp": false, ".other.db.tmp1": true, "tail.db.tmp9": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", name, err == nil, want)
		}
	}
}

// TestCheckpointSaveFailureStops: a checkpoint that cannot be saved stops
// the run with an error naming the input: going on would deliver lines
// that the next start delivers again, for as long as saves fail. It was a
// warning, and a run out of file descriptors re-read its files three
// times.
func TestCheckpointSaveFailureStops(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.log", "one\n")
	if err := os.Mkdir(filepath.Join(dir, "ckpt"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := tailConfig(t, dir, toNull, "a.log", "db: ckpt/tail.db", "poll_interval: 10ms")
	var log bytes.Buffer
	p, err := New(cfg, Options{Logger: testLogger(&log)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	for p.Summary().In < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // its checkpoint saved
	// The checkpoint's directory goes: the next save fails.
	if err := os.RemoveAll(filepath.Join(dir, "ckpt")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "a.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("two\n")
	f.Close()
	err = <-done
	if err == nil || !strings.Contains(err.Error(), "input tail.0: cannot save its checkpoint") {
		t.Fatalf("Run: %v, want the save's error", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the run went on until the deadline")
	}
}
