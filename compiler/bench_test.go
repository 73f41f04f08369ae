package compiler

import (
	"fmt"
	"testing"

	"github.com/policyrun/policyrun/internal/bigpolicy"
)

// The benchmarks run the whole of policyrun check and compile (parse,
// check, generate, peephole) on large generated policies of one shape each,
// at sizes N and 2N. They measure; nothing asserts a time. (The VM holds at
// most 32,768 constants, so the line shapes stop at 25,000 statements.)

var (
	lineSizes = []int{1_000, 2_000, 12_500, 25_000}
	pathSizes = []int{1_000, 2_000, 50_000, 100_000}
)

func benchCompile(b *testing.B, gen func(int) []byte, sizes []int) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			src := gen(n)
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if prog, diags := CompileFile("big.policy", src); prog == nil {
					b.Fatal(diags.Err())
				}
			}
		})
	}
}

func BenchmarkCompileFileLong(b *testing.B)     { benchCompile(b, bigpolicy.Sets, lineSizes) }
func BenchmarkCompileFileIfs(b *testing.B)      { benchCompile(b, bigpolicy.Ifs, lineSizes) }
func BenchmarkCompileFileLongPath(b *testing.B) { benchCompile(b, bigpolicy.Path, pathSizes) }
func BenchmarkCompileFileSetPath(b *testing.B)  { benchCompile(b, bigpolicy.SetPath, pathSizes) }
