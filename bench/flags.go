package bench

import (
	"flag"
	"strings"

	"github.com/policyrun/policyrun/internal/contentenc"
	"github.com/policyrun/policyrun/internal/gen"
)

// Flags defines on fl the flags of a B1 run, which policyrun bench
// pipeline and bench report share; c takes their values as fl is parsed.
// A count left 0 takes its default when the run starts (RunB1).
func (c *B1Config) Flags(fl *flag.FlagSet) {
	fl.StringVar(&c.Repo, "repo", "", "the policyrun repository `DIR` (default: found from the working directory up)")
	fl.StringVar(&c.Data, "data", "", "`DIR` for the binary, the data and the configs (default: $TMPDIR/policyrun-bench; --quick: a temporary directory)")
	fl.StringVar(&c.Binary, "policyrun", "", "measure this policyrun `BINARY` instead of one built from the repository")
	fl.IntVar(&c.Runs, "runs", 0, "runs of every configuration (default 5; --quick 1)")
	fl.IntVar(&c.Flat, "flat", 0, "flat records (default 1,000,000; --quick 20,000)")
	fl.IntVar(&c.K8s, "k8s", 0, "Kubernetes records (default 300,000; --quick 6,000)")
	fl.Uint64Var(&c.Seed, "seed", 1, "seed of policyrun gen")
	fl.StringVar(&c.Backends, "backends", strings.Join(B1Backends, ","), "backends, comma-separated")
	fl.StringVar(&c.Policies, "policies", "all", "policies of conformance/policies, comma-separated (e.g. 1-noop,3-edit), or all")
	fl.BoolVar(&c.Quick, "quick", false, "small counts, one run: a smoke test")
}

// Flags defines on fl the flags of policyrun bench otlp, with the load's
// defaults; l takes their values as fl is parsed.
func (l *OTLPLoad) Flags(fl *flag.FlagSet) {
	fl.StringVar(&l.URL, "url", "http://127.0.0.1:4318/v1/logs", "the OTLP/HTTP logs endpoint")
	fl.IntVar(&l.Clients, "clients", 16, "clients sending at once, each on its own connection")
	fl.IntVar(&l.Batch, "batch", gen.OTLPBatch, "records per request")
	fl.IntVar(&l.Records, "records", 1_000_000, "records to send and measure")
	fl.StringVar(&l.Encoding, "encoding", "protobuf", "protobuf or json")
	fl.StringVar(&l.Compression, "compression", "none", "none, or the requests' Content-Encoding: "+strings.Join(contentenc.Names(), " or "))
	fl.IntVar(&l.Warmup, "warmup", 50_000, "records sent first, not measured")
	fl.Uint64Var(&l.Seed, "seed", 1, "the generator's seed")
	fl.IntVar(&l.ServerPID, "server-pid", 0, "the server's process id, to measure its CPU and memory (Linux /proc)")
	fl.DurationVar(&l.Wait, "wait", 0, "wait up to this long for the endpoint to accept connections before sending")
}
