package luascript

import (
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

const testScript = `
function cb(tag, ts, record)
  if record["mode"] == "drop" then return -1, ts, record end
  if record["mode"] == "keep" then record["ignored"] = true; return 0, ts, record end
  if record["mode"] == "edit" then record["tag"] = tag; record["n"] = record["n"] + 1; return 2, ts, record end
  if record["mode"] == "time" then return 1, ts + 1.5, record end
  if record["mode"] == "timetable" then return 1, {sec = 10, nsec = 5}, record end
  if record["mode"] == "error" then error("boom") end
  if record["mode"] == "nil" then return nil end
  if record["mode"] == "code" then return 7, ts, record end
  if record["mode"] == "norecord" then return 2, ts, "x" end
  if record["mode"] == "loop" then while true do end end
  if record["mode"] == "rep" then record["r"] = string.rep("ab", 3); record["big"] = string.rep("x", 1e10); return 2, ts, record end
  if record["mode"] == "recurse" then local function f(n) return 1 + f(n + 1) end; f(1) end
  if record["mode"] == "func" then record["f"] = function() end; return 2, ts, record end
  if record["mode"] == "sandbox" then
    record["os"] = type(os); record["io"] = type(io); record["require"] = type(require)
    record["load"] = type(load); record["dofile"] = type(dofile); record["loadstring"] = type(loadstring)
    record["rep"] = string.rep("ab", 3)
    return 2, ts, record
  end
  if record["mode"] == "nested" then record["m"]["z"] = 1; record["arr"][3] = 3; record["new"] = {}; return 2, ts, record end
  return 0, ts, record
end
`

func TestScript(t *testing.T) {
	s, err := Load("test.lua", []byte(testScript), "cb")
	if err != nil {
		t.Fatal(err)
	}
	s.Timeout = 50 * time.Millisecond
	tests := []struct {
		in, want string
		res      spec.Result
		time     int64
	}{
		{`{"mode":"drop"}`, ``, spec.Result{Action: spec.Drop}, 0},
		{`{"mode":"keep","f":1.0}`, `{"mode":"keep","f":1.0}`, spec.Result{}, 0},
		{`{"mode":"edit","n":1,"f":2.0,"x":null}`, `{"mode":"edit","n":2,"f":2.0,"tag":"app.log"}`, spec.Result{}, 0},
		{`{"mode":"time"}`, `{"mode":"time"}`, spec.Result{}, 1_500_000_000},
		{`{"mode":"timetable"}`, `{"mode":"timetable"}`, spec.Result{}, 10_000_000_005},
		{`{"mode":"error","a":1}`, `{"mode":"error","a":1}`, spec.Result{Fault: spec.LuaError}, 0},
		{`{"mode":"nil"}`, `{"mode":"nil"}`, spec.Result{Fault: spec.BadReturn}, 0},
		{`{"mode":"code"}`, `{"mode":"code"}`, spec.Result{Fault: spec.BadReturn}, 0},
		{`{"mode":"norecord"}`, `{"mode":"norecord"}`, spec.Result{Fault: spec.BadReturn}, 0},
		{`{"mode":"loop"}`, `{"mode":"loop"}`, spec.Result{Fault: spec.Timeout}, 0},
		{`{"mode":"func"}`, `{"mode":"func"}`, spec.Result{Fault: spec.BadReturn}, 0},
		{`{"mode":"rep"}`, `{"mode":"rep"}`, spec.Result{Fault: spec.LuaError}, 0},
		{`{"mode":"recurse"}`, `{"mode":"recurse"}`, spec.Result{Fault: spec.LuaError}, 0},
		{`{"mode":"sandbox"}`, `{"mode":"sandbox","dofile":"nil","io":"nil","load":"nil","loadstring":"nil","os":"table","rep":"ababab","require":"nil"}`, spec.Result{}, 0},
		{`{"mode":"nested","m":{"a":1},"arr":[1,2]}`, `{"mode":"nested","m":{"a":1,"z":1},"arr":[1,2,3],"new":{}}`, spec.Result{}, 0},
		// After a timeout the runner works again.
		{`{"mode":"edit","n":5}`, `{"mode":"edit","n":6,"tag":"app.log"}`, spec.Result{}, 0},
	}
	var counts spec.Counts
	for _, tc := range tests {
		a := record.NewArena()
		rec, err := a.DecodeJSON([]byte(tc.in), record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		rec.SetTag([]byte("app.log"))
		rec.Commit()
		res, err := s.Run(rec)
		if (err != nil) != res.Faulted() {
			t.Fatalf("%s: result %v with error %v", tc.in, res, err)
		}
		counts.Add(res)
		if res != tc.res {
			t.Errorf("%s: got %v, want %v", tc.in, res, tc.res)
			continue
		}
		if tc.res.Action == spec.Drop {
			continue
		}
		if got := string(rec.AppendJSON(nil)); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
		if rec.Time() != tc.time {
			t.Errorf("%s: time %d, want %d", tc.in, rec.Time(), tc.time)
		}
	}
	if f := counts.Faults; f[spec.LuaError] != 3 || f[spec.BadReturn] != 4 || f[spec.Timeout] != 1 {
		t.Errorf("fault counts %v", f)
	}
}

func TestLoadScriptErrors(t *testing.T) {
	if _, err := Load("bad.lua", []byte("function cb("), "cb"); err == nil {
		t.Error("a syntax error loaded")
	}
	if _, err := Load("none.lua", []byte("function other() end"), "cb"); err == nil || !strings.Contains(err.Error(), "no function cb") {
		t.Errorf("missing function: %v", err)
	}
	if _, err := Load("boom.lua", []byte(`error("at load")`), "cb"); err == nil {
		t.Error("a script that fails at load time loaded")
	}
}
