package conformance

import (
	"sync"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/internal/gen"
	"github.com/policyrun/policyrun/lua"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// B5's "add an attribute" (BENCHMARKS.md), the OTLP seed policy.
const otlpAddAttributeSrc = `policy "otlp-add-attribute"
schema otlp

set .attributes."bench.added" = "yes"
`

func otlpAddAttribute(tb testing.TB) b1Policy {
	prog, diags := compiler.CompileFile("otlp-add-attribute.policy", []byte(otlpAddAttributeSrc))
	if prog == nil {
		tb.Fatal(diags)
	}
	return b1Policy{name: "otlp-add-attribute", kind: "otlp", src: []byte(otlpAddAttributeSrc), prog: prog}
}

var (
	otlpReqsOnce sync.Once
	otlpReqs     [][]byte
)

// otlpRequests are benchBatch of gen's B5 records (seed 1) as protobuf
// requests of gen.OTLPBatch.
func otlpRequests(testing.TB) [][]byte {
	otlpReqsOnce.Do(func() { otlpReqs = gen.OTLPRequests(benchBatch, 1) })
	return otlpReqs
}

// BenchmarkBackendsOTLP is otlp-add-attribute on the VM and transpiled to
// Lua, side by side over the same decoded OTLP records, as
// BenchmarkBackends does for the B1 policies.
func BenchmarkBackendsOTLP(b *testing.B) {
	p := otlpAddAttribute(b)
	f, info := checkPolicy(b, "otlp-add-attribute.policy", p.src)
	tp, err := lua.Compile(f, info, spec.Options{})
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, f func(*record.Record)) {
		br := &restorableBatch{a: record.NewArena(), otlp: otlpRequests(b)}
		br.reset(b)
		for _, rec := range br.recs {
			f(rec)
		}
		br.reset(b)
		timePerRecord(b, &br.recs, func() { br.reset(b) }, f)
	}
	b.Run(p.name+"/vm", func(b *testing.B) {
		m := vm.NewMachine(p.prog)
		run(b, func(rec *record.Record) { m.Run(rec) })
	})
	b.Run(p.name+"/lua_transpiled", func(b *testing.B) {
		r := newRunner(b, tp.NewRunner)
		run(b, func(rec *record.Record) {
			if _, err := r.Run(rec); err != nil {
				b.Fatal(err)
			}
		})
	})
}
