package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// spinScript is a script whose top level never ends.
const spinScript = "while true do end\nfunction cb(tag, ts, record) return 0, ts, record end\n"

// TestEvalLuaLimits: eval --lua runs the script's top level within the
// time limit, and faults a record that would pass the memory limit. (The
// scripts hang or kill the process without their limits: withDeadline.)
func TestEvalLuaLimits(t *testing.T) {
	dir := writeFiles(t, map[string]string{"spin.lua": spinScript, "big.lua": `
function cb(tag, ts, record)
  if record.big then local s = "x"; for i = 1, 40 do s = s .. s end end
  record.ok = true
  return 2, ts, record
end
`})
	spin, big := filepath.Join(dir, "spin.lua"), filepath.Join(dir, "big.lua")
	withDeadline(t, "eval of a looping top level", 10*time.Second, func() {
		code, _, errs := runWith("", "eval", "--lua", spin, "--call", "cb", "--lua-timeout", "200ms")
		if code != 1 || !strings.Contains(errs, "the top-level chunk ran past the time limit (200ms)") {
			t.Errorf("a looping top level: exit %d, %s", code, errs)
		}
	})
	withDeadline(t, "eval of a script past its memory limit", 30*time.Second, func() {
		code, out, errs := runWith(`{"big":true}`+"\n"+`{"n":1}`+"\n", "eval", "--lua", big, "--call", "cb", "--lua-memory-limit", "16M", "--lua-timeout", "20s")
		if code != 0 || out != `{"big":true}`+"\n"+`{"n":1,"ok":true}`+"\n" || !strings.Contains(errs, "1 faulted (memory_limit 1)") {
			t.Errorf("exit %d, stdout %q, stderr %s", code, out, errs)
		}
	})
	if code, _, errs := runWith("", "eval", "--lua", big, "--call", "cb", "--lua-memory-limit", "lots"); code != 2 || !strings.Contains(errs, "expected a size") {
		t.Errorf("a bad size: exit %d, %s", code, errs)
	}
}

// TestRunCheckLuaTopLevel: run --check loads a script's top level within
// its time_limit instead of hanging.
func TestRunCheckLuaTopLevel(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"spin.lua": spinScript,
		"p.yaml": `
pipeline:
  inputs:
    - name: tail
      path: a.log
  filters:
    - name: lua
      script: spin.lua
      call: cb
      time_limit: 200ms
  outputs:
    - name: null
`,
	})
	withDeadline(t, "run --check of a looping top level", 10*time.Second, func() {
		code, _, errs := runCLI("run", "--check", filepath.Join(dir, "p.yaml"))
		if code != 1 || !strings.Contains(errs, "the top-level chunk ran past the time limit (200ms)") {
			t.Errorf("exit %d, %s", code, errs)
		}
	})
}
