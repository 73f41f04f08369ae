package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/bench"
)

// TestBenchPipeline runs bench pipeline over a little data with this test
// binary as policyrun: the configurations, interleaved runs measured from
// outside, the JSON, and the data kept for the next run.
func TestBenchPipeline(t *testing.T) {
	needChildProcess(t)
	t.Setenv("POLICYRUN_AS_CLI", "1") // the children: this binary as policyrun (TestMain)
	dir := t.TempDir()
	args := []string{"bench", "pipeline", "--policyrun", os.Args[0], "--data", dir, "--runs", "2",
		"--flat", "2000", "--k8s", "500", "--policies", "1-noop,5-k8s-edit", "--backends", "vm"}
	var stdout, stderr bytes.Buffer
	if code := run(args, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	var res bench.B1Results
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	var names []string
	for _, c := range res.Cases {
		names = append(names, c.Name)
		if len(c.Samples) != 2 || c.Records != int64(res.Records[c.Data]) {
			t.Errorf("%s: %d samples, %d records", c.Name, len(c.Samples), c.Records)
		}
		for _, s := range []bench.Stat{c.CPU, c.Wall, c.RSS, c.CPUPerM} {
			if s.N != 2 || s.Min > s.Median || s.Median > s.Max || s.Min <= 0 {
				t.Errorf("%s: stat %+v", c.Name, s)
			}
		}
	}
	if got := strings.Join(names, " "); got != "none/flat none/k8s 1-noop/vm 5-k8s-edit/vm" {
		t.Errorf("cases %s", got)
	}
	if res.Records["flat"] != 2000 || res.Records["k8s"] != 500 || res.Runs != 2 {
		t.Errorf("header %+v", res)
	}
	// Interleaved: round 2 starts one configuration further on.
	progress := regexp.MustCompile(`(?m)^run (\d)/2 (\S+)`).FindAllStringSubmatch(stderr.String(), -1)
	var order []string
	for _, m := range progress {
		order = append(order, m[1]+":"+m[2])
	}
	if got := strings.Join(order, " "); got != "1:none/flat 1:none/k8s 1:1-noop/vm 1:5-k8s-edit/vm 2:none/k8s 2:1-noop/vm 2:5-k8s-edit/vm 2:none/flat" {
		t.Errorf("run order %s", got)
	}
	// The second time the data is kept.
	stderr.Reset()
	args[7], args[13] = "1", "1-noop" // --runs 1 --policies 1-noop
	if code := run(args, nil, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "kept") {
		t.Errorf("exit %d, data not kept:\n%s", code, stderr.String())
	}
}

func TestBenchUsage(t *testing.T) {
	report := filepath.Join(t.TempDir(), "r.html")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bench"}, 2, "usage: policyrun bench pipeline"},
		{[]string{"bench", "-h"}, 0, "usage: policyrun bench pipeline"},
		{[]string{"bench", "nope"}, 2, `unknown benchmark command "nope"`},
		{[]string{"bench", "report", "--sections", "b9"}, 2, `unknown section "b9"`},
		{[]string{"bench", "report", "-h"}, 0, "--quick runs small counts"},
		{[]string{"bench", "pipeline", "--backends", "jit"}, 2, `unknown backend "jit"`},
		{[]string{"bench", "pipeline", "--policies", "10-nope"}, 2, "no conformance/policies/10-nope.policy"},
		{[]string{"bench", "report", "--others", "/nonexistent.json", "--sections", "b2", "--bench", "/dev/null"}, 2, "nonexistent.json"},
		{[]string{"bench", "report", "--others", "none", "--sections", "b2", "--bench", "/dev/null", "-o", report}, 0, "wrote " + report},
		{[]string{"bench", "otlp", "--encoding", "xml"}, 2, "usage: policyrun bench otlp"},
		// The endpoint is --url: one given as an argument was ignored, and
		// the load went to the default.
		{[]string{"bench", "otlp", "--records", "1", "http://10.0.0.1:4318/v1/logs"}, 2, "unexpected arguments: http://10.0.0.1:4318/v1/logs"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, nil, &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant exit %d and %q", c.args, code, stderr.String(), c.code, c.want)
		}
	}
}
