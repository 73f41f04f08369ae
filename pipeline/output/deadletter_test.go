package output

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testsync"
	"github.com/policyrun/policyrun/pipeline/buffer"
)

// TestDeadLetter: with a filesystem buffer and dead_letter, a request its
// receiver refuses for good (400, 413, 500), or whose retries run out, is
// written to the dead-letter directory rather than dropped, counted and
// logged; Replay sends the files again once the receiver takes them, and
// removes each one delivered. Without it the records were dropped though
// the input had acknowledged them.
func TestDeadLetter(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		mod    func(*OTLPConfig)
	}{
		{"400", http.StatusBadRequest, nil},
		{"413", http.StatusRequestEntityTooLarge, nil},
		{"500", http.StatusInternalServerError, nil},
		{"retries run out", http.StatusServiceUnavailable, func(c *OTLPConfig) { c.Retry.MaxElapsed = 100 * time.Millisecond }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc, url, refuse := refusingReceiver(t, tt.status)
			dir := t.TempDir()
			dead := filepath.Join(dir, "dead")
			o, log := start(t, "otlp", otlpTo(url, func(c *OTLPConfig) {
				c.Buffer.Type = buffer.Filesystem
				c.DeadLetter.Path = dead
				if tt.mod != nil {
					tt.mod(c)
				}
			}), Env{Dir: dir})
			write(t, o, numbered(t, 0, 10))
			write(t, o, numbered(t, 10, 10))
			// The chunks are counted dead-lettered before they leave the
			// buffer: wait for both.
			if !testsync.Eventually(wait, func() bool { s := o.Stats(); return s.DeadLettered == 20 && s.BufferChunks == 0 }) {
				t.Fatalf("stats = %+v, want 20 records dead-lettered and no chunk left in the buffer", o.Stats())
			}
			if !strings.Contains(log.String(), "kept in the dead-letter directory") {
				t.Errorf("log:\n%s", log)
			}
			files, _ := deadLetterFiles(dead)
			if len(files) == 0 {
				t.Fatal("nothing in the dead-letter directory")
			}
			refuse.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			st, err := o.Replay(ctx, o.log)
			if err != nil || st.Records != 20 || st.Left != 0 || st.Files != int64(len(files)) {
				t.Fatalf("Replay = %+v, %v", st, err)
			}
			rc.Each(t, 20)
			if left, _ := deadLetterFiles(dead); len(left) != 0 {
				t.Errorf("left after the replay: %v", left)
			}
		})
	}
}

// TestDeadLetterFullAndDamaged: past dead_letter.max_size a refused
// request is counted as before (rejected) and logged, not written; a
// damaged file is left by Replay and reported, the others sent.
func TestDeadLetterFullAndDamaged(t *testing.T) {
	_, url, refuse := refusingReceiver(t, 400)
	dir := t.TempDir()
	o, log := start(t, "otlp", otlpTo(url, func(c *OTLPConfig) {
		c.Buffer.Type = buffer.Filesystem
		c.DeadLetter = DeadLetterConfig{Path: "dead", MaxSize: 2500}
	}), Env{Dir: dir})
	for i := range 4 { // one request each
		write(t, o, numbered(t, 10*i, 10))
		if !testsync.Eventually(wait, func() bool { return o.Stats().Rejected == int64(10*(i+1)) }) {
			t.Fatalf("stats = %+v", o.Stats())
		}
	}
	s := o.Stats()
	if s.DeadLettered == 0 || s.DeadLettered == 40 {
		t.Errorf("dead-lettered %d of 40, want some, the rest past max_size\n%s", s.DeadLettered, log)
	}
	if !strings.Contains(log.String(), "max_size") {
		t.Errorf("log does not say the directory is full:\n%s", log)
	}
	files, _ := deadLetterFiles(filepath.Join(dir, "dead"))
	os.WriteFile(filepath.Join(dir, "dead", "0-000000"+deadLetterExt), []byte("PRDL1\n\x05\x00\x00\x00\x00garbage"), 0o644)
	refuse.Store(false)
	st, err := o.Replay(context.Background(), o.log)
	if err != nil || st.Files != int64(len(files)) || st.Records != s.DeadLettered || st.Left != 1 {
		t.Errorf("Replay = %+v, %v; want %d files, %d records, the damaged one left", st, err, len(files), s.DeadLettered)
	}
}

// TestDeadLetterPut: put writes a file readDeadLetter reads back, leaving
// no temporary file; opening the directory removes the temporary files a
// crash left (this version's, named by deadLetterTemp then digits, and
// the older ones without digits) and counts the files kept in its size.
func TestDeadLetterPut(t *testing.T) {
	dir := t.TempDir()
	stale := []string{"1-000001" + deadLetterExt + deadLetterTemp + "123", "2-000002" + deadLetterExt + deadLetterTemp}
	for _, name := range append(stale, "3-000003"+deadLetterExt) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("12345"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := openDeadLetter(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if d.size != 5 {
		t.Errorf("size = %d, want 5: the kept file's alone", d.size)
	}
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was not removed", name)
		}
	}
	path, err := d.put([]byte("the body"), 7)
	if err != nil {
		t.Fatal(err)
	}
	records, body, err := readDeadLetter(path)
	if err != nil || records != 7 || string(body) != "the body" {
		t.Errorf("read back %d, %q, %v", records, body, err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*"+deadLetterTemp+"*")); len(tmps) != 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
	if fi, err := os.Stat(path); err != nil || d.size != 5+fi.Size() {
		t.Errorf("size = %d, want 5 and the new file's", d.size)
	}
}
