package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// TestPerPluginCounts checks that the summary and the metrics count each
// input, filter and output by its alias: the defaults (tail.1, policy.0,
// lua.0, null.0) and the ones given.
func TestPerPluginCounts(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.log", `{"level":"debug"}`+"\n"+`{"n":1}`+"\n"+`{"fault":true}`+"\n"+`{"broken`+"\n")
	writeFile(t, dir, "b.log", `{"n":2}`+"\n")
	cfg := writeConfig(t, dir, pipelineYAML(`  filters:
    - name: policy
      file: drop-debug
    - name: lua
      match: b
      script: pass.lua
      call: cb
  outputs:
    - name: null
      match: a
    - name: stdout
      alias: console
      match: b
`, tailInput("a.log", "alias: app", "tag: a", "parser: json", "exit_on_eof: true"), tailInput("b.log", "tag: b", "parser: json", "exit_on_eof: true")))
	var out bytes.Buffer
	p := runPipeline(t, cfg, Options{Stdout: &out, NewProcessor: func(f config.Filter, _ string) (Processor, error) {
		if f.Name == "lua" {
			return ProcessorFunc(func(recs []*record.Record) ([]*record.Record, StageCounts) { return recs, StageCounts{} }), nil
		}
		return dropDebug, nil
	}})
	s := p.Summary()
	wantInputs := []InputSummary{{Alias: "app", In: 4, Unparsed: 1, BytesIn: 50}, {Alias: "tail.1", In: 1, BytesIn: 8}}
	wantFilters := []FilterSummary{
		{Alias: "policy.0", In: 5, Dropped: 1, Faulted: 1, Faults: map[string]int64{"type_mismatch": 1}},
		{Alias: "lua.0", In: 1},
	}
	if !reflect.DeepEqual(s.Inputs, wantInputs) {
		t.Errorf("inputs = %+v, want %+v", s.Inputs, wantInputs)
	}
	if !reflect.DeepEqual(s.Filters, wantFilters) {
		t.Errorf("filters = %+v, want %+v", s.Filters, wantFilters)
	}
	if len(s.Outputs) != 2 || s.Outputs[0].Alias != "null.0" || s.Outputs[0].Out != 3 ||
		s.Outputs[1].Alias != "console" || s.Outputs[1].Out != 1 || s.Outputs[1].BytesOut != int64(out.Len()) {
		t.Errorf("outputs = %+v", s.Outputs)
	}
	sum := summaryText(s)
	var metrics bytes.Buffer
	p.WriteMetrics(&metrics)
	for _, tt := range []struct{ where, text, want string }{
		{"summary", sum, "input app: in 4, unparsed 1, bytes 50\n"},
		{"summary", sum, "input tail.1: in 1, unparsed 0, bytes 8\n"},
		{"summary", sum, "filter policy.0: in 5, dropped 1, faulted 1 (type_mismatch 1)\n"},
		{"summary", sum, "filter lua.0: in 1, dropped 0, faulted 0\n"},
		{"summary", sum, "output null.0: out 3, bytes "},
		{"summary", sum, fmt.Sprintf("output console: out 1, bytes %d\n", out.Len())},
		{"metrics", metrics.String(), "# TYPE policyrun_input_records_in_total counter\npolicyrun_input_records_in_total{name=\"app\"} 4\npolicyrun_input_records_in_total{name=\"tail.1\"} 1\n"},
		{"metrics", metrics.String(), "policyrun_input_records_unparsed_total{name=\"app\"} 1\n"},
		{"metrics", metrics.String(), "policyrun_input_bytes_in_total{name=\"tail.1\"} 8\n"},
		{"metrics", metrics.String(), "policyrun_filter_records_in_total{name=\"policy.0\"} 5\npolicyrun_filter_records_in_total{name=\"lua.0\"} 1\n"},
		{"metrics", metrics.String(), "policyrun_filter_records_dropped_total{name=\"policy.0\"} 1\n"},
		{"metrics", metrics.String(), "policyrun_filter_records_faulted_total{name=\"lua.0\"} 0\n"},
		{"metrics", metrics.String(), "# TYPE policyrun_filter_faults_total counter\npolicyrun_filter_faults_total{name=\"policy.0\",reason=\"type_mismatch\"} 1\n"},
		{"metrics", metrics.String(), "policyrun_output_records_out_total{name=\"console\"} 1\n"},
		{"metrics", metrics.String(), fmt.Sprintf("policyrun_output_bytes_out_total{name=\"console\"} %d\n", out.Len())},
		{"metrics", metrics.String(), "policyrun_records_in_total 5\n"}, // the totals stay
	} {
		if !strings.Contains(tt.text, tt.want) {
			t.Errorf("the %s lacks %q:\n%s", tt.where, tt.want, tt.text)
		}
	}
}

// faulty is a stage that faults on every record, with a message for each
// when msgs, as a broken Lua filter does.
func faulty(msgs bool) Processor {
	return ProcessorFunc(func(recs []*record.Record) ([]*record.Record, StageCounts) {
		c := StageCounts{Faulted: int64(len(recs)), Faults: map[string]int64{"lua_error": int64(len(recs))}}
		for i := range recs {
			if msgs && i < MaxFaultMessages {
				c.Messages = append(c.Messages, FaultMessage{Reason: "lua_error", Msg: fmt.Sprintf("f.lua:4: attempt to index a nil value (%d)", len(c.Messages))})
			}
		}
		return recs, c
	})
}

// TestFaultLog checks that the fault messages of a filter are logged with
// its alias, the first MaxFaultMessages of the run in full and the rest
// counted, and that faults without a message are only counted.
func TestFaultLog(t *testing.T) {
	tests := []struct {
		name    string
		records int
		msgs    bool
		want    []string // the log's lines, in order, each containing this
	}{
		{"a few", 3, true, []string{
			`level=WARN msg=fault filter=bad reason=lua_error err="f.lua:4: attempt to index a nil value (0)"`,
			`err="f.lua:4: attempt to index a nil value (1)"`,
			`err="f.lua:4: attempt to index a nil value (2)"`,
		}},
		{"a flood", 42, true, []string{
			`msg=fault filter=bad reason=lua_error err="f.lua:4: attempt to index a nil value (0)"`,
			`(1)`, `(2)`, `(3)`, `(4)"`,
			`msg="bad has logged 5 faults; the rest are counted, not logged (the summary and the metrics count them)" filter=bad`,
			`msg="… and 37 more lua_error faults in bad (the summary counts them)" filter=bad reason=lua_error more=37`,
		}},
		{"no messages", 42, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "a.log", strings.Repeat("x\n", tt.records))
			filter := "  filters:\n    - name: lua\n      alias: bad\n      script: bad.lua\n      call: cb\n"
			// batch_size 10: the messages come over several batches.
			cfg := tailConfig(t, dir, filter+toNull+"service:\n  batch_size: 10\n", "a.log", "exit_on_eof: true")
			var log bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
			s := runPipeline(t, cfg, Options{Logger: logger, NewProcessor: every(faulty(tt.msgs))}).Summary()
			var lines []string
			if text := strings.TrimSpace(log.String()); text != "" {
				lines = strings.Split(text, "\n")
			}
			if len(lines) != len(tt.want) {
				t.Fatalf("the log has %d lines, want %d:\n%s", len(lines), len(tt.want), log.String())
			}
			for i, w := range tt.want {
				if !strings.Contains(lines[i], w) {
					t.Errorf("log line %d = %s\nwant it to contain %s", i, lines[i], w)
				}
			}
			want := fmt.Sprintf("filter bad: in %d, dropped 0, faulted %d (lua_error %d)\n", tt.records, tt.records, tt.records)
			if sum := summaryText(s); !strings.Contains(sum, want) {
				t.Errorf("summary lacks %q:\n%s", want, sum)
			}
		})
	}
}

// program is a backend.Program whose Run returns results[n % len] for the
// n-th record it runs.
type program struct {
	results []runResult
	n       int
}

type runResult struct {
	res spec.Result
	err error
}

func (p *program) Run(*record.Record) (spec.Result, error) {
	r := p.results[p.n%len(p.results)]
	p.n++
	return r.res, r.err
}

// batchProgram fails its RunBatch with err.
type batchProgram struct {
	program
	err error
}

func (p *batchProgram) RunBatch(recs []*record.Record, results []spec.Result) error { return p.err }

// TestPolicyStageMessages checks that policyStage passes on the errors of
// a program's faulted results as fault messages, at most
// MaxFaultMessages a batch, and an error without a fault (a failure of the
// backend) as a lua_error with its message.
func TestPolicyStageMessages(t *testing.T) {
	nilIndex := errors.New("f.lua:4: attempt to index a nil value")
	tests := []struct {
		name string
		prog interface {
			Run(*record.Record) (spec.Result, error)
		}
		records int
		faults  map[string]int64
		dropped int64
		msgs    []FaultMessage
	}{
		{"faults with messages", &program{results: []runResult{
			{spec.Result{}, nil},
			{spec.Result{Fault: spec.LuaError}, nilIndex},
			{spec.Result{Action: spec.Drop, Fault: spec.Timeout}, errors.New("f.lua: timed out")},
		}}, 6, map[string]int64{"lua_error": 2, "timeout": 2}, 2, []FaultMessage{
			{"lua_error", nilIndex.Error()}, {"timeout", "f.lua: timed out"},
			{"lua_error", nilIndex.Error()}, {"timeout", "f.lua: timed out"},
		}},
		{"a fault without a message", &program{results: []runResult{{spec.Result{Fault: spec.LuaError}, nil}}},
			2, map[string]int64{"lua_error": 2}, 0, nil},
		{"a backend failure", &program{results: []runResult{{spec.Result{}, errors.New("the backend broke")}}},
			1, map[string]int64{"lua_error": 1}, 0, []FaultMessage{{"lua_error", "the backend broke"}}},
		{"at most MaxFaultMessages a batch", &program{results: []runResult{{spec.Result{Fault: spec.LuaError}, nilIndex}}},
			20, map[string]int64{"lua_error": 20}, 0, []FaultMessage{
				{"lua_error", nilIndex.Error()}, {"lua_error", nilIndex.Error()}, {"lua_error", nilIndex.Error()},
				{"lua_error", nilIndex.Error()}, {"lua_error", nilIndex.Error()},
			}},
		{"a batch that fails", &batchProgram{err: errors.New("batch failed")},
			3, map[string]int64{"lua_error": 3}, 0, []FaultMessage{{"lua_error", "batch failed"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := record.NewArena()
			recs := make([]*record.Record, tt.records)
			for i := range recs {
				r, err := a.DecodeJSON([]byte(`{}`), record.Owned)
				if err != nil {
					t.Fatal(err)
				}
				recs[i] = r
			}
			s := &policyStage{prog: tt.prog}
			kept, c := s.Process(recs)
			if !reflect.DeepEqual(c.Faults, tt.faults) || c.Dropped != tt.dropped || len(kept) != tt.records-int(tt.dropped) {
				t.Errorf("faults %v, dropped %d, kept %d; want %v, %d", c.Faults, c.Dropped, len(kept), tt.faults, tt.dropped)
			}
			if !reflect.DeepEqual(c.Messages, tt.msgs) {
				t.Errorf("messages = %q\nwant %q", c.Messages, tt.msgs)
			}
		})
	}
}
