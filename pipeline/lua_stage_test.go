package pipeline

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/luascript"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/record"
)

const splitScript = `
function cb(tag, ts, record)
  if record.n % 4 == 0 then return -1, ts, record end
  if record.n % 4 == 1 then
    local out = {}
    for _, item in ipairs(record.items) do out[#out + 1] = {n = record.n, item = item} end
    return 2, ts, out
  end
  if record.n % 4 == 2 then return 2, ts, string.lower(record.missing) end
  return 0, ts, record
end
`

// TestStageSplits runs a script that splits, drops and faults records
// through a pipeline: each split record's records take its place, in order.
func TestStageSplits(t *testing.T) {
	var lines, want []string
	for n := 0; n < 40; n++ {
		lines = append(lines, fmt.Sprintf(`{"n":%d,"items":["a","b","c"]}`, n))
		switch n % 4 {
		case 1:
			for _, it := range []string{"a", "b", "c"} {
				want = append(want, fmt.Sprintf(`{"n":%d,"item":"%s"}`, n, it))
			}
		case 2, 3:
			want = append(want, lines[n])
		}
	}
	dir := t.TempDir()
	writeFile(t, dir, "in.log", strings.Join(lines, "\n")+"\n")
	writeFile(t, dir, "s.lua", splitScript)
	filter := "  filters:\n    - name: lua\n      script: s.lua\n      call: cb\n"
	cfg := tailConfig(t, dir, filter+toStdout, "in.log", "parser: json", "exit_on_eof: true", "poll_interval: 10ms")
	var out bytes.Buffer
	s := runPipeline(t, cfg, Options{Stdout: &out}).Summary()
	if got := strings.TrimSpace(out.String()); got != strings.Join(want, "\n") {
		t.Errorf("output\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if s.In != 40 || s.Dropped != 10 || s.Faulted != 10 || s.Out != 50 {
		t.Errorf("summary = %+v", s)
	}
}

// TestStageFaultMessages checks that a script's fault messages reach the
// stage's counts, at most MaxFaultMessages of them.
func TestStageFaultMessages(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "s.lua", splitScript)
	proc, err := NewStage(config.Filter{Name: "lua", Backend: config.ScriptBackend, File: "s.lua", Call: "cb"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	a := record.NewArena()
	var recs []*record.Record
	for n := 0; n < 30; n++ {
		r, err := a.DecodeJSON([]byte(fmt.Sprintf(`{"n":%d,"items":["x"]}`, n)), record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	kept, c := proc.Process(recs)
	if len(kept) != 30-8 || c.Added != 0 || c.Faulted != 7 || c.Faults["lua_error"] != 7 {
		t.Errorf("kept %d, counts %+v", len(kept), c)
	}
	if len(c.Messages) != MaxFaultMessages || c.Messages[0].Reason != "lua_error" || !strings.HasPrefix(c.Messages[0].Msg, dir+"/s.lua:9: bad argument #1 to lower") {
		t.Errorf("fault messages %q", c.Messages)
	}
}

// TestStageInlineCode runs a filter written in the config, with Fluent
// Bit's options.
func TestStageInlineCode(t *testing.T) {
	t.Setenv("POLICYRUN_STAGE_ENV", "from-env")
	dir := t.TempDir()
	writeFile(t, dir, "in.log", `{"code":"200","ids":{}}`+"\n")
	filter := `  filters:
    - name: lua
      call: cb
      code: |
        function cb(tag, ts, record)
          record.code = tonumber(record.code) + 0.5
          record.sec = ts.sec > 0
          record.env = os.getenv("POLICYRUN_STAGE_ENV")
          return 2, ts, record
        end
      time_as_table: true
      type_int_key: code
      type_array_key: ids
      allow_getenv: true
      protected_mode: false
`
	cfg := tailConfig(t, dir, filter+toStdout, "in.log", "parser: json", "exit_on_eof: true", "poll_interval: 10ms")
	var out, logs bytes.Buffer
	runPipeline(t, cfg, Options{Stdout: &out, Logger: testLogger(&logs)})
	if got, want := strings.TrimSpace(out.String()), `{"code":200,"ids":[],"env":"from-env","sec":true}`; got != want {
		t.Errorf("output %s, want %s", got, want)
	}
	if !strings.Contains(logs.String(), "protected_mode: false is ignored") {
		t.Errorf("no warning for protected_mode: false in %q", logs.String())
	}
}

func TestMergeSplit(t *testing.T) {
	a := record.NewArena()
	r := make([]*record.Record, 8)
	for i := range r {
		r[i] = a.NewRecord()
	}
	// recs 0..4; the stage ran over 1, 2 and 4: it dropped 2 and split 1
	// and 4 (5, 6 after 1; 7 after 4).
	recs := []*record.Record{r[0], r[1], r[2], r[3], r[4]}
	got := mergeSplit(recs, []*record.Record{r[1], r[2], r[4]}, []*record.Record{r[1], r[5], r[6], r[4], r[7]}, nil)
	want := []*record.Record{r[0], r[1], r[5], r[6], r[3], r[4], r[7]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func testLogger(w *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// TestScriptPrintsWithAlias checks that print in a script names the filter
// by its alias, as the logs and the summary do.
func TestScriptPrintsWithAlias(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "p.lua", "function cb(tag, ts, r) print('hi') return 0, ts, r end\n")
	for _, tt := range []struct{ alias, want string }{{"audit", "audit"}, {"", "p.lua"}} {
		proc, err := NewStage(config.Filter{Name: "lua", Alias: tt.alias, Backend: config.ScriptBackend, File: "p.lua", Call: "cb"}, dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := proc.(*policyStage).prog.(*luascript.Script).PrintPrefix; got != tt.want {
			t.Errorf("alias %q: print prefix %q, want %q", tt.alias, got, tt.want)
		}
	}
}
