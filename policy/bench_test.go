package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// benchSource is the messiest golden input: every construct, comments
// everywhere, odd spacing.
func benchSource(b *testing.B) []byte {
	src, err := os.ReadFile(filepath.Join("testdata", "format", "messy.input"))
	if err != nil {
		b.Fatal(err)
	}
	return src
}

func BenchmarkParseFile(b *testing.B) {
	src := benchSource(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := ParseFile("bench.policy", src); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

func BenchmarkFormatSource(b *testing.B) {
	src := benchSource(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FormatSource("bench.policy", src); err != nil {
			b.Fatal(err)
		}
	}
}
