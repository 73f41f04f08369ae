package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/policyrun/policyrun/bench"
	"github.com/policyrun/policyrun/internal/gen"
)

// otlpCount is the default record count of gen otlp.
const otlpCount = 100_000

// genCommand is `policyrun gen flat|k8s|cri [--count N] [--seed S] [-o FILE]`.
func genCommand(fl *flag.FlagSet) runFunc {
	count := fl.Int("count", 0, "number of lines (default: the B1 size, 1,000,000 flat or 300,000 k8s/cri)")
	seed := fl.Uint64("seed", 1, "seed; the same seed gives the same bytes")
	out := fl.String("o", "", "write to `FILE` instead of standard output")
	encoding := fl.String("encoding", "protobuf", "gen otlp: protobuf or json")
	return func(c *call) int {
		// The kind may come before or after the flags: those after it
		// are parsed here.
		kind := fl.Arg(0)
		if err := fl.Parse(fl.Args()[1:]); err != nil {
			return 2
		}
		if code, ok := noArgs(fl); !ok {
			return code
		}
		if _, ok := bench.B1Count[kind]; !ok && kind != "otlp" {
			fmt.Fprintf(c.stderr, "policyrun gen: unknown kind %q (known: %s)\n", kind, strings.Join(gen.Kinds, ", "))
			return 2
		}
		if kind != "otlp" && *encoding != "protobuf" || *encoding != "protobuf" && *encoding != "json" {
			fmt.Fprintf(c.stderr, "policyrun gen: --encoding %s: only gen otlp takes an encoding, protobuf or json\n", *encoding)
			return 2
		}
		n := *count
		if n == 0 {
			n = bench.B1Count[kind]
			if kind == "otlp" {
				n = otlpCount
			}
		}
		if n < 0 {
			fmt.Fprintln(c.stderr, "policyrun gen: --count must not be negative")
			return 2
		}

		w := c.stdout
		var f *os.File
		if *out != "" && *out != "-" {
			var err error
			if f, err = os.Create(*out); err != nil {
				fmt.Fprintf(c.stderr, "policyrun gen: %v\n", err)
				return 2
			}
			w = f
		}
		var err error
		if kind == "otlp" {
			err = gen.WriteOTLP(w, n, *seed, *encoding == "json")
		} else {
			err = gen.Write(w, kind, n, *seed)
		}
		if f != nil {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "policyrun gen: %v\n", err)
			return 2
		}
		return 0
	}
}
