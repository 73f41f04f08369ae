package pipeline

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

const stagePolicy = `policy "stage"

schema {
  n: int
  ...
}

drop when .n % 3 == 0
set .half = 10 / (.n % 5)
set .seen = true
`

const stageScript = `
function cb(tag, ts, record)
  if record["n"] % 3 == 0 then
    return -1, ts, record
  end
  if record["n"] % 5 == 0 then
    error("boom")
  end
  record["seen"] = true
  return 2, ts, record
end
`

// TestStageBackends runs the same pipeline with each backend: the VM and the
// transpiled policy must write identical output; the script, written to do
// the same, must keep, drop and fault the same records.
func TestStageBackends(t *testing.T) {
	var lines []string
	for i := 0; i < 300; i++ {
		lines = append(lines, fmt.Sprintf(`{"n":%d}`, i))
	}
	outputs := map[string]string{}
	for _, backend := range []string{"vm", "lua", "lua_script"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "in.log", strings.Join(lines, "\n")+"\n")
			writeFile(t, dir, "p.policy", stagePolicy)
			writeFile(t, dir, "s.lua", stageScript)
			file, call := "p.policy", ""
			if backend == "lua_script" {
				file, call = "s.lua", "\n      call: cb"
			}
			filter := fmt.Sprintf("  filters:\n    - name: policy\n      file: %s\n      backend: %s%s\n", file, backend, call)
			cfg := tailConfig(t, dir, filter+toStdout, "in.log", "parser: json", "exit_on_eof: true", "poll_interval: 10ms")
			var out bytes.Buffer
			s := runPipeline(t, cfg, Options{Stdout: &out}).Summary()
			// 100 multiples of 3 dropped; the 40 other multiples of 5
			// fault (division by zero, or the script's error) and pass
			// through unchanged.
			if s.In != 300 || s.Dropped != 100 || s.Faulted != 40 || s.Out != 200 {
				t.Errorf("summary = %+v", s)
			}
			reason := "division_by_zero"
			if backend == "lua_script" {
				reason = "lua_error"
			}
			if want := "filter policy.0: in 300, dropped 100, faulted 40 (" + reason + " 40)\n"; !strings.Contains(summaryText(s), want) {
				t.Errorf("summary lacks %q:\n%s", want, summaryText(s))
			}
			if got := strings.Count(out.String(), `"seen":true`); got != 160 {
				t.Errorf("%d records edited, want 160", got)
			}
			if !strings.Contains(out.String(), "{\"n\":5}\n") {
				t.Error("a faulted record is not passed through unchanged")
			}
			outputs[backend] = out.String()
		})
	}
	if outputs["vm"] != outputs["lua"] {
		t.Error("the VM and the transpiled policy wrote different output")
	}
}

func TestStagePolicyErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "bad.policy", "policy \"bad\"\n\nschema {\n  status: int\n}\n\ndrop when .status == \"500\"\n")
	cfg := tailConfig(t, dir, "  filters:\n    - name: policy\n      file: bad.policy\n"+toNull, "in.log")
	_, err := New(cfg, Options{})
	if err == nil || !strings.Contains(err.Error(), "E0301") || !strings.Contains(err.Error(), "bad.policy:7:11") {
		t.Fatalf("err = %v", err)
	}
}

// TestStagePolicyWarnings: a policy with warnings loads, and Warnings
// gives them as policyrun check prints them, once per file, on every
// backend.
func TestStagePolicyWarnings(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "warn.policy", "policy \"warn\"\n\nschema {\n  status: int\n  ...\n}\n\nset .s = .status ?? 0\n")
	writeFile(t, dir, "clean.policy", stagePolicy)
	filters := "  filters:\n    - name: policy\n      file: warn.policy\n    - name: policy\n      file: clean.policy\n" +
		"    - name: policy\n      file: warn.policy\n      backend: lua\n"
	p, err := New(tailConfig(t, dir, filters+toNull, "in.log"), Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ws := p.Warnings()
	if len(ws) != 1 || ws[0].N != 1 || !strings.HasSuffix(ws[0].File, "warn.policy") ||
		!strings.Contains(string(ws[0].Text), "warning[W0001]") || !strings.Contains(string(ws[0].Text), "warn.policy:8:18") {
		t.Fatalf("Warnings() = %+v", ws)
	}
}
