package pipeline

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/record"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, tag string
		want         bool
	}{
		{"*", "", true},
		{"*", "kube.a", true},
		{"kube.*", "kube.var.log", true},
		{"kube.*", "kub", false},
		{"kube.*.log", "kube.var.log", true},
		{"kube.*.log", "kube.var.txt", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.tag); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.tag, got, tt.want)
		}
	}
}

func TestTag(t *testing.T) {
	if got := Tag("kube.*", "/var/log/containers/app.log"); got != "kube.var.log.containers.app.log" {
		t.Errorf("Tag = %q", got)
	}
	if got := Tag("plain", "/x"); got != "plain" {
		t.Errorf("Tag = %q", got)
	}
}

// TestRouting checks the tag matching of stages and outputs past the 64
// that the cache keeps as bits, and that a record no output matches is
// counted as unrouted, not as out.
func TestRouting(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.log", "1\n2\n3\n")
	var b strings.Builder
	b.WriteString("  filters:\n")
	const stages = 70
	for i := range stages {
		match := "app"
		if i%2 == 1 {
			match = "other"
		}
		fmt.Fprintf(&b, "    - name: policy\n      match: %s\n      file: s%d.policy\n", match, i)
	}
	b.WriteString("  outputs:\n")
	for range 66 {
		b.WriteString("    - name: null\n      match: other\n")
	}
	cfg := tailConfig(t, dir, b.String(), "a.log", "tag: app", "exit_on_eof: true")
	seen := make([]int64, stages)
	next := 0
	p := runPipeline(t, cfg, Options{NewProcessor: func(config.Filter, string) (Processor, error) {
		n := &seen[next]
		next++
		return ProcessorFunc(func(recs []*record.Record) ([]*record.Record, StageCounts) {
			*n += int64(len(recs))
			return recs, StageCounts{}
		}), nil
	}})
	for i, n := range seen {
		if want := int64(3 * (1 - i%2)); n != want {
			t.Errorf("stage %d saw %d records, want %d", i, n, want)
		}
	}
	s := p.Summary()
	if s.In != 3 || s.Out != 0 || s.Unrouted != 3 {
		t.Errorf("in %d, out %d, unrouted %d; want 3, 0, 3", s.In, s.Out, s.Unrouted)
	}
	if sum := summaryText(s); !strings.Contains(sum, "out 0, dropped 0, faulted 0, unparsed 0, unrouted 3\n") {
		t.Errorf("summary:\n%s", sum)
	}
}

// TestPartialMatchDrop checks a stage that matches part of a batch and
// drops some of its records: exactly those go, and the records after them
// stay. (Stages write what they keep over the slice they are given; reading
// that slice afterwards as the selection dropped kept records and let
// dropped ones through.)
func TestPartialMatchDrop(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.log", `{"n":1}
{"n":2,"level":"debug"}
{"n":3}
{"n":4}
{"n":5,"level":"debug"}
{"n":6}
`)
	writeFile(t, dir, "b.log", `{"n":10,"level":"debug"}`+"\n")
	filter := "  filters:\n    - name: policy\n      match: \"*a.log\"\n      file: unused.policy\n"
	cfg := tailConfig(t, dir, filter+toStdout, `"*.log"`, "tag: t.*", "parser: json", "exit_on_eof: true")
	var out bytes.Buffer
	p := runPipeline(t, cfg, Options{Stdout: &out, NewProcessor: every(dropDebug)})
	var ns []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		i := strings.Index(l, `"n":`)
		ns = append(ns, strings.TrimRight(strings.SplitN(l[i+4:], ",", 2)[0], "}"))
	}
	slices.Sort(ns)
	if got := strings.Join(ns, " "); got != "1 10 3 4 6" {
		t.Errorf("records out: %s, want 1 10 3 4 6 (2 and 5 dropped; 10 not matched)", got)
	}
	if s := p.Summary(); s.Dropped != 2 || s.Out != 5 {
		t.Errorf("dropped %d, out %d; want 2, 5", s.Dropped, s.Out)
	}
}
