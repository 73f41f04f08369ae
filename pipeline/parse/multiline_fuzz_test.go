package parse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/record"
)

// Tight bounds, so that the fuzzer reaches them.
const (
	fuzzMaxLines  = 4
	fuzzMaxJoined = 64
)

// FuzzMultiline feeds any lines to the built-in rules and a user rule: no
// panic, and every line comes out once, in order, within the bounds. As
// raw lines (one stream), a record's log is its lines joined with "\n", so
// the records' logs joined with "\n" are the input. As CRI lines, the
// first byte of each line picks its stream (bit 0: stderr) and whether it
// is a part (bit 1: P); each stream's records must hold its lines, parts
// joined, in order.
func FuzzMultiline(f *testing.F) {
	for _, name := range []string{"java.txt", "python.txt", "go.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", "multiline", name))
		if err != nil {
			f.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			lines = append(lines, strings.TrimPrefix(l[1:], " "))
		}
		f.Add([]byte(strings.Join(lines, "\n")))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := strings.Split(string(data), "\n")
		rules := append(append([]*Rule(nil), builtins...), testRule(t, `^BEGIN`, `^\s`))
		ml := Multiline{Rules: rules, MaxLines: fuzzMaxLines}

		p, err := NewMultiline("raw", fuzzMaxJoined, ml)
		if err != nil {
			t.Fatal(err)
		}
		a := record.NewArena()
		var out []*record.Record
		for _, l := range lines {
			out, _ = p.Parse(a, out, "s", []byte(l), tail.Mark{})
		}
		out = p.Flush(a, out, "s")
		checkFuzzed(t, p, "raw", out, map[string][]string{"stdout": lines})

		p, err = NewMultiline("cri", 0, ml)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{}
		part := map[string]string{} // a line's parts so far, by stream
		partial := map[string]bool{}
		out = out[:0]
		for _, l := range lines {
			stream, tag, msg := "stdout", "F", l
			if len(l) > 0 {
				if l[0]&1 != 0 {
					stream = "stderr"
				}
				if l[0]&2 != 0 {
					tag = "P"
				}
				msg = l[1:]
			}
			out, err = p.Parse(a, out, "s", []byte("2026-11-29T21:00:00Z "+stream+" "+tag+" "+msg), tail.Mark{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			part[stream] += msg
			partial[stream] = tag == "P"
			if tag == "F" {
				want[stream] = append(want[stream], part[stream])
				part[stream] = ""
			}
		}
		for _, s := range []string{"stdout", "stderr"} {
			if partial[s] {
				want[s] = append(want[s], part[s]) // flushed as it is
			}
		}
		out = p.Flush(a, out, "s")
		checkFuzzed(t, p, "cri", out, want)
	})
}

// checkFuzzed checks that out holds, per stream, the lines of want in
// order, each record within the bounds, and that nothing is left held.
func checkFuzzed(t *testing.T, p Parser, parser string, out []*record.Record, want map[string][]string) {
	t.Helper()
	if _, held := p.Held("s"); held {
		t.Fatalf("%s: held after Flush", parser)
	}
	got := map[string][]string{}
	for _, r := range out {
		log := ""
		if v, ok := r.Get(pathLog); ok {
			log = string(r.Arena().Bytes(v))
		}
		stream := "stdout"
		if v, ok := r.Get(pathStream); ok {
			stream = string(r.Arena().Bytes(v))
		}
		if n := strings.Count(log, "\n") + 1; n > fuzzMaxLines {
			t.Errorf("%s: a record of %d lines", parser, n)
		}
		if parser == "raw" && strings.Contains(log, "\n") && len(log) > fuzzMaxJoined {
			t.Errorf("%s: a record of several lines and %d bytes", parser, len(log))
		}
		got[stream] = append(got[stream], log)
	}
	for _, s := range []string{"stdout", "stderr"} {
		if g, w := strings.Join(got[s], "\n"), strings.Join(want[s], "\n"); g != w || len(want[s]) > 0 && len(got[s]) == 0 {
			t.Fatalf("%s %s: records\n%q\nwant the lines\n%q", parser, s, got[s], want[s])
		}
	}
}
