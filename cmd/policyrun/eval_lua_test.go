package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const evalScript = `
function cb(tag, ts, record)
  if record["level"] == "debug" then return -1, ts, record end
  if record["level"] == "boom" then error("boom") end
  if record["level"] == "spin" then while true do end end
  record["n"] = (record["n"] or 0) + 1
  return 2, ts, record
end
`

func TestEvalLuaScript(t *testing.T) {
	script := filepath.Join(t.TempDir(), "f.lua")
	if err := os.WriteFile(script, []byte(evalScript), 0o644); err != nil {
		t.Fatal(err)
	}
	in := `{"level":"debug"}` + "\n" + `{"level":"info","n":1}` + "\n" + `{"level":"boom","x":1.5}` + "\n" + `{"level":"spin"}` + "\n"
	code, out, errs := runWith(in, "eval", "--lua", script, "--call", "cb", "--lua-timeout", "50ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := `{"level":"info","n":2}` + "\n" + `{"level":"boom","x":1.5}` + "\n" + `{"level":"spin"}` + "\n"
	if out != want {
		t.Errorf("stdout\n%s\nwant\n%s", out, want)
	}
	if s := "eval: 4 in, 3 out, 1 dropped, 2 faulted (lua_error 1, timeout 1)"; !strings.Contains(errs, s) {
		t.Errorf("stderr lacks %q:\n%s", s, errs)
	}
	for _, args := range [][]string{
		{"eval", "--lua", script},                                  // no --call
		{"eval", "--lua", script, "--call", "cb", "--policy", "x"}, // both
		{"eval", "--lua", "/does/not/exist.lua", "--call", "cb"},
	} {
		if code, _, _ := runWith("", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, errs := runWith("", "eval", "--lua", script, "--call", "nope"); code != 1 || !strings.Contains(errs, "no function nope") {
		t.Errorf("a missing function: exit %d, %s", code, errs)
	}
}
