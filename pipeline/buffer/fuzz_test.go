package buffer

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzChunkFile reads arbitrary bytes as a chunk file left by a run (and
// a spare beside it): the buffer never panics, delivers only payloads
// that the file holds (compressed ones aside), reports damage rather than
// failing to start, and leaves no chunk file once everything is done.
// The seed corpus is chunk files the buffer wrote: plain, compressed,
// reused, cut.
func FuzzChunkFile(f *testing.F) {
	for _, comp := range []string{"", "gzip", "zstd"} {
		dir := f.TempDir()
		cfg := fsConfig(dir, nil)
		cfg.Compression = comp
		b, err := New(cfg)
		if err != nil {
			f.Fatal(err)
		}
		for i := range 3 {
			if _, err := b.Put(f.Context(), long(i), i+1, false); err != nil {
				f.Fatal(err)
			}
		}
		b.Close()
		files, _ := filepath.Glob(filepath.Join(dir, "*"+chunkExt))
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
			f.Add(data[:len(data)-7])
		}
	}
	f.Add([]byte("PRBC"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, chunkName(1)), data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "00000000000000000002"+spareExt), data, 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := New(fsConfig(dir, nil))
		if err != nil {
			t.Fatalf("a damaged chunk file stopped the buffer: %v", err)
		}
		defer b.Close()
		for _, p := range drain(t, b) {
			if len(p) > 0 && !bytes.Contains(data, []byte(p)) && !bytes.Contains(data, []byte{0x1f, 0x8b}) && !bytes.Contains(data, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
				t.Fatalf("delivered %q, which the file does not hold", p)
			}
		}
		if s := b.Stats(); s.Chunks != 0 || s.Bytes != 0 {
			t.Errorf("after delivery: %+v", s)
		}
		// A Put after it goes into a chunk numbered past both files.
		put(t, b, payload(9), 1)
		c := get(t, b)
		if c.Seq <= 2 {
			t.Errorf("new chunk numbered %d", c.Seq)
		}
		b.Done(c, 0)
	})
}
