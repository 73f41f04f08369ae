package compiler

import (
	"fmt"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/bigpolicy"
)

// The benchmarks run the whole of policyrun check and compile (parse,
// check, generate, peephole) on large generated policies of one shape each,
// at sizes N and 2N. They measure; nothing asserts a time. (The VM holds at
// most 32,768 constants, registers and paths and 65,535 instructions, so
// some shapes stop short of the checker's sizes.)

var (
	lineSizes = []int{1_000, 2_000, 12_500, 25_000}
	ifSizes   = []int{1_000, 2_000, 4_000}
	pathSizes = []int{1_000, 2_000, 50_000, 100_000}
	setSizes  = []int{1_000, 2_000, 5_000, 10_000}
	nestSizes = []int{1_000, 2_000, 5_000, 10_000}
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
func BenchmarkCompileFileIfs(b *testing.B)      { benchCompile(b, bigpolicy.Ifs, ifSizes) }
func BenchmarkCompileFileLongPath(b *testing.B) { benchCompile(b, bigpolicy.Path, pathSizes) }
func BenchmarkCompileFileSetPath(b *testing.B)  { benchCompile(b, bigpolicy.SetPath, setSizes) }
func BenchmarkCompileFileNested(b *testing.B)   { benchCompile(b, bigpolicy.Nested, nestSizes) }
