package parse

import (
	"fmt"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/racedetect"
	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/record"
)

// plainLines are ordinary log lines of services, none of them in a trace.
var plainLines = []string{
	`2026-11-29 21:00:01.502  INFO 1 --- [nio-8080-exec-4] c.e.shop.order.OrderController           : order 81724 submitted`,
	`2026-11-29T21:00:01.503Z level=info msg="request completed" method=GET path=/api/v1/orders/81724 status=200 latency_ms=3.1`,
	`2026/11/29 21:00:06 worker 3: sync of order 81723 started`,
	`2026-11-29 21:00:03,118 INFO shop.worker: picked job 5521`,
	`10.0.0.12 - - [29/Nov/2026:21:00:01 +0000] "GET /healthz HTTP/1.1" 200 2 "-" "kube-probe/1.31"`,
	`2026-11-29 21:00:01.470  WARN 1 --- [nio-8080-exec-3] c.e.shop.order.OrderController           : order 81723 left pending`,
	`{"time":"2026-11-29T21:00:00.001Z","level":"info","msg":"cache warmed","entries":5120}`,
	`2026-11-29 21:00:04,000 INFO shop.worker: idle`,
}

// wrap writes lines as parser reads them.
func wrap(parser string, lines []string) [][]byte {
	out := make([][]byte, len(lines))
	for i, l := range lines {
		t := fixtureTime.Add(time.Duration(i) * time.Millisecond)
		switch parser {
		case "cri":
			l = t.Format(time.RFC3339Nano) + " stdout F " + l
		case "docker":
			l = dockerLine(l+"\n", "stdout", t)
		}
		out[i] = []byte(l)
	}
	return out
}

func fixtureLines(tb testing.TB) []string {
	var lines []string
	for _, name := range []string{"java.txt", "python.txt", "go.txt"} {
		lines = append(lines, readFixture(tb, name).lines...)
	}
	return lines
}

// newBenchParser is parser with rules (none: without multiline).
func newBenchParser(tb testing.TB, parser, rules string) Parser {
	tb.Helper()
	var p Parser
	var err error
	switch rules {
	case "none":
		p, err = New(parser)
	case "builtin":
		p, err = NewMultiline(parser, 0, Multiline{Rules: builtins})
	case "user":
		p, err = NewMultiline(parser, 0, Multiline{Rules: []*Rule{testRule(tb, `^(Traceback|panic:|\S+Exception)`, `^\s`)}})
	case "timestamp":
		// Every line begins a record, held until the next one.
		p, err = NewMultiline(parser, 0, Multiline{Rules: []*Rule{testRule(tb, `^\d{4}[-/]\d\d[-/]\d\d`, "")}})
	}
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// parseLines parses lines as the pipeline does, into an arena reset every
// 256 lines (its chunks), and returns the records made.
func parseLines(p Parser, a *record.Arena, out []*record.Record, lines [][]byte, n int) int {
	made := 0
	for i := range n {
		if i%256 == 0 {
			a.Reset()
		}
		out, _ = p.Parse(a, out[:0], "/var/log/containers/shop.log", lines[i%len(lines)], tail.Mark{})
		made += len(out)
	}
	return made
}

// BenchmarkMultiline measures a line's way through a parser with and
// without multiline rules: ordinary lines (plain), which no rule holds
// but the timestamp one, and the lines of the fixtures' traces. An op is
// one line.
//
//	go test ./pipeline/parse -run '^$' -bench Multiline -benchmem
func BenchmarkMultiline(b *testing.B) {
	traces := fixtureLines(b)
	for _, parser := range []string{"raw", "cri", "docker"} {
		for _, c := range []struct {
			rules, lines string
		}{
			{"none", "plain"}, {"builtin", "plain"}, {"user", "plain"}, {"timestamp", "plain"},
			{"none", "traces"}, {"builtin", "traces"},
		} {
			if parser != "raw" && (c.rules == "user" || c.rules == "timestamp") {
				continue
			}
			src := plainLines
			if c.lines == "traces" {
				src = traces
			}
			b.Run(fmt.Sprintf("%s/%s/%s", parser, c.rules, c.lines), func(b *testing.B) {
				p := newBenchParser(b, parser, c.rules)
				lines := wrap(parser, src)
				a := record.NewArena()
				out := make([]*record.Record, 0, 4)
				b.ReportAllocs()
				b.ResetTimer()
				made := parseLines(p, a, out, lines, b.N)
				b.ReportMetric(float64(made)/float64(b.N), "records/line")
			})
		}
	}
}

// TestMultilinePlainLinesDoNotAllocate holds the hot path to its target:
// a line that no rule holds costs no allocation, with the built-in rules
// on any parser that takes them, as without them.
func TestMultilinePlainLinesDoNotAllocate(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("allocation counts mean nothing under the race detector")
	}
	for _, parser := range MultilineParsers {
		for _, rules := range []string{"none", "builtin", "user"} {
			if parser != "raw" && rules == "user" {
				continue
			}
			p := newBenchParser(t, parser, rules)
			lines := wrap(parser, plainLines)
			a := record.NewArena()
			out := make([]*record.Record, 0, 4)
			parseLines(p, a, out, lines, 1024) // the arena grows once
			if n := testing.AllocsPerRun(20, func() { parseLines(p, a, out, lines, 256) }); n != 0 {
				t.Errorf("%s with %s rules: %.1f allocations per 256 plain lines", parser, rules, n)
			}
		}
	}
}
