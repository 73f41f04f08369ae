package pipeline

import (
	"bytes"
	"strings"
	"testing"
)

// TestStageScriptLimits: a lua filter runs within its time_limit and
// memory_limit; without them the first record would hang the pipeline and
// the second kill the process.
func TestStageScriptLimits(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.log", `{"n":1}`+"\n"+`{"n":2}`+"\n"+`{"n":3}`+"\n")
	writeFile(t, dir, "s.lua", `
function cb(tag, ts, record)
  if record.n == 1 then while true do end end
  if record.n == 2 then local s = "x"; for i = 1, 40 do s = s .. s end end
  record.seen = true
  return 2, ts, record
end
`)
	filter := "  filters:\n    - name: lua\n      script: s.lua\n      call: cb\n      time_limit: 1s\n      memory_limit: 16M\n"
	cfg := tailConfig(t, dir, filter+toStdout, "in.log", "parser: json", "exit_on_eof: true", "poll_interval: 10ms")
	var out bytes.Buffer
	s := runPipeline(t, cfg, Options{Stdout: &out}).Summary()
	if s.In != 3 || s.Out != 3 || s.Faulted != 2 || s.Faults["timeout"] != 1 || s.Faults["memory_limit"] != 1 {
		t.Errorf("summary = %+v", s)
	}
	if want := `{"n":1}` + "\n" + `{"n":2}` + "\n" + `{"n":3,"seen":true}` + "\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	if strings.Contains(out.String(), "xxxx") {
		t.Error("a faulted record was changed")
	}
}
