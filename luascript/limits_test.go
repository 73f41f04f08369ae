package luascript

import (
	"context"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/racedetect"
	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// runScript runs a script's cb once over {"n":1} and returns the result
// and the record as JSON.
func runScript(t *testing.T, s *Script) (spec.Result, string) {
	t.Helper()
	return runScriptOn(t, s, `{"n":1}`)
}

func runScriptOn(t *testing.T, s *Script, in string) (spec.Result, string) {
	t.Helper()
	a := record.NewArena()
	rec, err := a.DecodeJSON([]byte(in), record.Owned)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(rec)
	if err != nil && !res.Faulted() {
		t.Fatal(err) // a failure of the backend, not a fault (whose message err is)
	}
	return res, string(rec.AppendJSON(nil))
}

// TestMemoryLimit runs scripts that try to build huge strings and tables.
// Without the limit each of them kills the process (fatal error: out of
// memory); with it, each faults its record with memory_limit, within the
// time limit, and the next call runs on a fresh state.
func TestMemoryLimit(t *testing.T) {
	const big = `local big = string.rep("x", 1048576); big = big .. big` // 2 MiB
	for name, body := range map[string]string{
		"gsub":         `local s = string.rep("x", 1048576); s = s:gsub("x", s)`,
		"gsub%1":       `local s = string.rep("x", 1048576); s = s:gsub("(" .. string.rep("x", 1000) .. ")", string.rep("%1", 1e5))`,
		"gsub-func":    `local s = string.rep("x", 1048576); s = s:gsub("x", function() return s end)`,
		"double":       `local s = "x"; for i = 1, 40 do s = s .. s end`,
		"concat-many":  `local s = string.rep("x", 1048576); s = s .. s .. s .. s .. s .. s .. s .. s .. s .. s; for i = 1, 10 do s = s .. s .. s end`,
		"table":        `local t = {}; for i = 1, 1e9 do t[i] = i end`,
		"table-insert": `local t = {}; for i = 1, 1e9 do table.insert(t, i) end`,
		"table-keys":   `local t = {}; for i = 1, 1e9 do t["k" .. i] = true end`,
		"tables":       `local t = {}; for i = 1, 1e9 do t[i] = {} end`,
		"closures":     `local t = {}; for i = 1, 1e9 do t[i] = function() return i end end`,
		"rawset":       `local t = {}; for i = 1, 1e9 do rawset(t, i, i) end`,
		"format":       big + `; local s = string.format("%s%s", big, big)`,
		"format-width": `local f = string.rep("%999999d", 2000); local s = string.format(f, 1)`,
		"table.concat": `local t = {}; local s = string.rep("x", 1048576); for i = 1, 2000 do t[i] = s end; local r = table.concat(t)`,
		"rep":          `local t = {}; for i = 1, 1e6 do t[i] = string.rep("x", 1048576) .. i end`,
		"upper":        big + `; local t = {}; for i = 1, 100 do t[i] = big:upper() end`,
		"reverse":      big + `; local t = {}; for i = 1, 100 do t[i] = big:reverse() end`,
		"gmatch":       big + `; for w in big:gmatch("x") do end`,
		"pcall":        `pcall(function() local s = "x"; for i = 1, 40 do s = s .. s end end)`,
		"nested":       `local t = {}; for i = 1, 1e9 do t = {t} end`,
		"upvalue":      `local s = "x"; local function f() for i = 1, 40 do s = s .. s end end; f()`,
	} {
		t.Run(name, func(t *testing.T) {
			src := "n = 0\nfunction cb(tag, ts, record)\n  n = n + 1\n  if record.boom then " + body + " end\n  record.n = n\n  return 2, ts, record\nend\n"
			s, err := LoadLimits(name+".lua", []byte(src), "cb", Limits{Time: 20 * time.Second, Memory: 4 << 20})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, out := runScriptOn(t, s, `{"boom":true}`)
			if res.Fault != spec.MemoryLimit || out != `{"boom":true}` {
				t.Fatalf("got %v %s after %v, want memory_limit and the record unchanged", res, out, time.Since(start))
			}
			// A fresh state: n starts again.
			if res, out := runScript(t, s); res.Fault != spec.NoFault || out != `{"n":1}` {
				t.Errorf("the next call: %v %s, want a fresh state", res, out)
			}
		})
	}
}

// TestMemoryLimitAcrossCalls: a script that keeps what it makes in a
// global faults when the state holds too much, not at its first call.
func TestMemoryLimitAcrossCalls(t *testing.T) {
	src := `
cache = {}
function cb(tag, ts, record)
  cache[#cache + 1] = string.rep("y", 100000) .. #cache
  record.n = #cache
  return 2, ts, record
end`
	s, err := LoadLimits("leak.lua", []byte(src), "cb", Limits{Time: time.Second, Memory: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// One runner: the pool may hand out fresh ones (it drops entries
	// under the race detector).
	r, err := s.NewRunner()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run := func() (spec.Result, string) {
		a := record.NewArena()
		rec, err := a.DecodeJSON([]byte(`{"n":1}`), record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		res, _ := r.Run(rec)
		return res, string(rec.AppendJSON(nil))
	}
	calls := 0
	for {
		calls++
		res, _ := run()
		if res.Fault == spec.MemoryLimit {
			break
		}
		if res.Fault != spec.NoFault || calls > 100 {
			t.Fatalf("call %d: %v", calls, res)
		}
	}
	if calls < 30 {
		t.Errorf("faulted at call %d: 4 MiB holds about 40 strings of 100 kB", calls)
	}
	if _, out := run(); out != `{"n":1}` {
		t.Errorf("after the fault: %s, want a fresh state", out)
	}
}

// TestMemoryLimitNoFalseFault: garbage does not count, only what the state
// holds: building a string piece by piece allocates far more than the
// limit in all, and holds little.
func TestMemoryLimitNoFalseFault(t *testing.T) {
	src := `
function cb(tag, ts, record)
  local out = ""
  for i = 1, 1000 do out = out .. string.rep("z", 100) end
  local t = {}
  for j = 1, 20 do
    t = {}
    for i = 1, 20000 do t[i] = i end
  end
  local s = string.rep("q", 500000)
  for i = 1, 50 do local u = s:upper() end
  record.n = #out + #t
  return 2, ts, record
end`
	s, err := LoadLimits("churn.lua", []byte(src), "cb", Limits{Time: 20 * time.Second, Memory: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if res, out := runScript(t, s); res.Fault != spec.NoFault || out != `{"n":120000}` {
			t.Fatalf("got %v %s", res, out)
		}
	}
}

// TestLoadLimits: the top-level chunk runs within the limits.
func TestLoadLimits(t *testing.T) {
	for name, tc := range map[string]struct {
		src  string
		time time.Duration
		want string
	}{
		"loop":   {"while true do end\nfunction cb() end", 200 * time.Millisecond, "ran past the time limit (200ms)"},
		"memory": {"local s = 'x'; for i = 1, 40 do s = s .. s end\nfunction cb() end", 10 * time.Second, "passed the memory limit"},
	} {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := LoadLimits(name+".lua", []byte(tc.src), "cb", Limits{Time: tc.time, Memory: DefaultMemoryLimit})
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("got %v, want %q", err, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("loading did not end")
			}
		})
	}
}

// TestBindContext: once the bound context ends, a looping call stops
// within the time limit, and so do the calls after it.
func TestBindContext(t *testing.T) {
	src := "function cb(tag, ts, record) while true do end end"
	s, err := LoadLimits("loop.lua", []byte(src), "cb", Limits{Time: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.BindContext(ctx)
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	for i := range 10 {
		if res, _ := runScript(t, s); res.Fault != spec.Timeout {
			t.Fatalf("call %d: %v", i, res)
		}
	}
	// The first call runs out its own time limit (at 300ms), the second
	// is stopped 300ms after the cancel (at 400ms: the grace is the time
	// limit, a second at most), the others at once; unbound, the ten
	// would take 3s.
	if d := time.Since(start); d > time.Second {
		t.Errorf("10 looping calls took %v", d)
	}
}

// TestPatternTimeLimit: a pattern that backtracks for minutes inside one
// string library call stops at the time limit (the search asks the
// state's context now and then), with every pattern function, and the
// next call runs.
func TestPatternTimeLimit(t *testing.T) {
	for _, call := range []string{
		`string.find(s, ".-.-.-b")`,
		`string.match(s, ".-.-.-b")`,
		`string.gsub(s, ".-.-.-b", "")`,
		`(function() for m in string.gmatch(s, ".-.-.-b") do end end)()`,
	} {
		t.Run(call, func(t *testing.T) {
			src := "function cb(tag, ts, record)\n" +
				"  if record.n == 1 then local s = string.rep('a', 3000); local _ = " + call + " end\n" +
				"  record.ok = true\n  return 1, ts, record\nend"
			s, err := LoadLimits("pattern.lua", []byte(src), "cb", Limits{Time: 200 * time.Millisecond, Memory: DefaultMemoryLimit})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan spec.Result, 1)
			go func() {
				res, _ := runScript(t, s)
				done <- res
			}()
			select {
			case res := <-done:
				if res.Fault != spec.Timeout {
					t.Fatalf("got %v, want a timeout", res)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the search did not stop") // it runs for minutes unchecked
			}
			if res, out := runScriptOn(t, s, `{"n":2}`); res.Fault != spec.NoFault || out != `{"n":2,"ok":true}` {
				t.Errorf("the next call: %v %s", res, out)
			}
		})
	}
}

// TestTailCallTimeLimit: a loop of tail calls stopped by the time limit
// faults with timeout and the memory of one record. The traceback of the
// error wrote a line for each tail call: a second's loop took 8 s and
// 1.5 GB building it.
func TestTailCallTimeLimit(t *testing.T) {
	src := "function cb(tag, ts, record)\n  local function f() return f() end\n  f()\nend\n"
	s, err := LoadLimits("tail.lua", []byte(src), "cb", Limits{Time: 300 * time.Millisecond, Memory: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, out := runScript(t, s)
	runtime.ReadMemStats(&after)
	if res.Fault != spec.Timeout || out != `{"n":1}` {
		t.Fatalf("got %v %s, want timeout and the record unchanged", res, out)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
		t.Errorf("the fault allocated %d MB", n>>20)
	}
}

// TestLiveWalkMeasures holds the memory limit's measurement of what a
// state holds to what Go's heap really spends on it, within a factor of
// 1.5 either way: counted far below, a state at a 64 MB limit held
// 500 MB of RSS.
func TestLiveWalkMeasures(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("the race detector's shadow memory is in the heap figures")
	}
	for name, body := range map[string]string{
		"numbers":       `for i = 1, 200000 do t[i] = i end`,
		"string keys":   `for i = 1, 200000 do t["k" .. i] = i end`,
		"tables":        `for i = 1, 100000 do t[i] = {i, i} end`,
		"closures":      `for i = 1, 100000 do t[i] = function() return i end end`,
		"strings":       `for i = 1, 100000 do t[i] = tostring(i) .. "-" .. string.rep("x", 40) end`,
		"short strings": `for i = 1, 200000 do t[i] = "k" .. i end`,
		"string maps":   `for i = 1, 100000 do t["k" .. i] = {i} end`,
	} {
		t.Run(name, func(t *testing.T) {
			L := glua.NewState()
			defer L.Close()
			var w liveWalk
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			live0 := w.live(L, math.MaxInt64)
			if err := L.DoString("t = {}\n" + body); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			live := w.live(L, math.MaxInt64) - live0
			heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			r := float64(live) / float64(heap)
			t.Logf("measured %d KB, the heap grew %d KB (%.2f)", live>>10, heap>>10, r)
			if r < 1/1.5 || r > 1.5 {
				t.Errorf("measured %d KB, the heap grew %d KB (%.2f)", live>>10, heap>>10, r)
			}
			runtime.KeepAlive(L)
		})
	}
}

// TestLiveWalkHoldsLittle holds what a measurement allocates for itself to
// a small part of what it measures: it runs beside a state at its limit,
// and a set of every table seen and a queue of every string made a state
// of short strings at a 64 MB limit reach 196 MB of RSS.
func TestLiveWalkHoldsLittle(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("the race detector's shadow memory is in the heap figures")
	}
	for _, body := range []string{
		`for i = 1, 100000 do t[i] = {i} end`,
		`for i = 1, 200000 do t[i] = "k" .. i end`,
		`for i = 1, 100000 do t["k" .. i] = {s = "v" .. i} end`,
	} {
		t.Run(body, func(t *testing.T) {
			L := glua.NewState()
			defer L.Close()
			if err := L.DoString("t = {}\n" + body); err != nil {
				t.Fatal(err)
			}
			var w liveWalk
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			live := w.live(L, math.MaxInt64)
			runtime.ReadMemStats(&after)
			if n := int64(after.TotalAlloc - before.TotalAlloc); n > live/8 {
				t.Errorf("measuring %d KB allocated %d KB", live>>10, n>>10)
			}
		})
	}
}
