package tail

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/policyrun/policyrun/internal/gen"
)

// BenchmarkRead reads 100,000 flat lines (about 25 MB) with exit_on_eof,
// committing every batch as the pipeline does.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "flat.log")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := gen.Write(f, "flat", 100_000, 1); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for range b.N {
		tl, err := New(Config{Paths: []string{p}, ReadFromHead: true, ExitOnEOF: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			batch, err := tl.Poll(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n += len(batch.Lines)
			tl.Commit(batch.Cursor)
		}
		tl.Close()
		if n != 100_000 {
			b.Fatalf("%d lines", n)
		}
	}
}
