package policyrun

import (
	"bytes"
	"testing"

	"github.com/policyrun/policyrun/pipeline"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/record"
)

// BenchmarkJSON runs the k8s example policy over 1,000 of B1's Kubernetes
// JSON lines: through a Batch, through Policy.Process, and through the
// pipeline's policy stage with the same decode and encode around it (the
// pipeline's own work: what an embedder's call should cost no more than).
// ns/op is per record.
//
//	go test -run '^$' -bench JSON -benchmem -count 10 . | benchstat -
func BenchmarkJSON(b *testing.B) {
	in := k8sLines(b, 1000)
	p, err := Compile("k8s.policy", k8sPolicy(b))
	if err != nil {
		b.Fatal(err)
	}
	n := bytes.Count(in, []byte{'\n'})
	for _, bc := range []struct {
		name    string
		process func(dst, in []byte, f Format) ([]byte, Counts, error)
	}{
		{"batch", p.NewBatch().Process},
		{"process", p.Process},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var out []byte
			for b.Loop() {
				if out, _, err = bc.process(out[:0], in, JSON); err != nil {
					b.Fatal(err)
				}
			}
			perRecord(b, n)
		})
	}
	b.Run("stage", func(b *testing.B) {
		stage, err := pipeline.NewStage(config.Filter{Name: "policy", File: "k8s.policy"}, "examples/k8s")
		if err != nil {
			b.Fatal(err)
		}
		a := record.NewArena()
		recs := make([]*record.Record, 0, chunk)
		var out []byte
		for b.Loop() {
			out = out[:0]
			rest := in
			for len(rest) > 0 {
				i := bytes.IndexByte(rest, '\n')
				rec, err := a.DecodeJSON(rest[:i], record.Referenced)
				if err != nil {
					b.Fatal(err)
				}
				rest = rest[i+1:]
				if recs = append(recs, rec); len(recs) == chunk || len(rest) == 0 {
					kept, _ := stage.Process(recs)
					for _, r := range kept {
						out = append(r.AppendJSON(out), '\n')
					}
					recs = recs[:0]
					a.Reset()
				}
			}
		}
		perRecord(b, n)
	})
}

// perRecord reports the time per record of a run over n records an op.
func perRecord(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}
