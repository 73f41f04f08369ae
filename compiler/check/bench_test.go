package check

import (
	"fmt"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/bigpolicy"
	"github.com/policyrun/policyrun/policy"
)

// The benchmarks check large generated policies of one shape each (see
// internal/testkit/bigpolicy) at two or more sizes: the time per op at 2N should be
// about twice the time at N. They measure; nothing asserts a time.

var (
	lineSizes = []int{1_000, 2_000, 25_000, 50_000}
	pathSizes = []int{1_000, 2_000, 50_000, 100_000}
)

func benchCheck(b *testing.B, gen func(int) []byte, sizes []int) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			f, errs := policy.ParseFile("big.policy", gen(n))
			if len(errs) > 0 {
				b.Fatal(errs[0])
			}
			b.ReportAllocs()
			for b.Loop() {
				Check(f)
			}
		})
	}
}

// BenchmarkCheckLong: straight-line set .fN = .x + N statements.
func BenchmarkCheckLong(b *testing.B) { benchCheck(b, bigpolicy.Sets, lineSizes) }

func BenchmarkCheckIfs(b *testing.B)    { benchCheck(b, bigpolicy.Ifs, lineSizes) }
func BenchmarkCheckLets(b *testing.B)   { benchCheck(b, bigpolicy.Lets, lineSizes) }
func BenchmarkCheckNarrow(b *testing.B) { benchCheck(b, bigpolicy.Narrow, lineSizes) }
func BenchmarkCheckAnd(b *testing.B)    { benchCheck(b, bigpolicy.And, lineSizes) }

// BenchmarkCheckLongPath: one read of .a.a.a… with n steps.
func BenchmarkCheckLongPath(b *testing.B)  { benchCheck(b, bigpolicy.Path, pathSizes) }
func BenchmarkCheckIndexPath(b *testing.B) { benchCheck(b, bigpolicy.IndexPath, pathSizes) }
func BenchmarkCheckSetPath(b *testing.B)   { benchCheck(b, bigpolicy.SetPath, pathSizes) }
func BenchmarkCheckCoalesce(b *testing.B)  { benchCheck(b, bigpolicy.Coalesce, pathSizes) }

// BenchmarkCheckNested: blocks and brackets nested to the limit, n/1000
// times.
func BenchmarkCheckNested(b *testing.B) { benchCheck(b, bigpolicy.Nested, lineSizes) }
