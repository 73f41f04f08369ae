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

// luaFile writes src to f.lua in a new temporary directory and returns
// its path.
func luaFile(t *testing.T, src string) string {
	t.Helper()
	return filepath.Join(writeFiles(t, map[string]string{"f.lua": src}), "f.lua")
}

func TestEvalLuaScript(t *testing.T) {
	script := luaFile(t, evalScript)
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

const evalCompatScript = `function cb(tag, ts, record)
  if record.split then return 2, ts, {{part = 1}, {part = 2}} end
  if record.code then return record.code, ts, record end
  local r = record.k.x
  r.tag = tag
  r.date = os.date("!%Y-%m-%dT%H:%M:%S", ts)
  return 2, ts, r
end
`

func TestEvalLuaFaultsSplitsTagTime(t *testing.T) {
	script := luaFile(t, evalCompatScript)
	in := `{"split":true}` + "\n" + `{"code":7}` + "\n" + `{"k":{"x":{"a":1}}}` + "\n" + `{"n":1}` + "\n"
	code, out, errs := runWith(in, "eval", "--lua", script, "--call", "cb", "--tag", "app.log", "--time", "2026-11-30T14:05:09Z")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := `{"part":1}` + "\n" + `{"part":2}` + "\n" + `{"code":7}` + "\n" + `{"a":1,"date":"2026-11-30T14:05:09","tag":"app.log"}` + "\n" + `{"n":1}` + "\n"
	if out != want {
		t.Errorf("stdout\n%s\nwant\n%s", out, want)
	}
	for _, s := range []string{
		"policyrun eval: record 2: bad_return: " + script + ": cb returned code 7 (want -1, 0, 1 or 2)\n",
		"policyrun eval: record 4: lua_error: " + script + ":4: attempt to index a non-table object(nil) with key 'x'\n",
		"eval: 4 in, 5 out, 0 dropped, 2 faulted (bad_return 1, lua_error 1)",
	} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errs)
		}
	}
	if code, _, errs := runWith("", "eval", "--lua", script, "--call", "cb", "--time", "yesterday"); code != 2 || !strings.Contains(errs, "--time") {
		t.Errorf("a bad --time: exit %d, %s", code, errs)
	}
}

func TestEvalPolicyTagTime(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "p.policy")
	src := "policy \"meta\"\n\nset .tag = %tag\nset .time = format_time(%time, \"%Y-%m-%dT%H:%M:%S\")\n"
	if err := os.WriteFile(pol, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"vm", "lua"} {
		code, out, errs := runWith(`{"a":1}`+"\n", "eval", "--policy", pol, "--backend", backend, "--tag", "kube.x", "--time", "2026-11-30T14:05:09.5+01:00")
		if want := `{"a":1,"tag":"kube.x","time":"2026-11-30T13:05:09"}` + "\n"; code != 0 || out != want {
			t.Errorf("%s: exit %d, stdout %s, want %s; stderr %s", backend, code, out, want, errs)
		}
	}
}
