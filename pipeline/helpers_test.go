package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
	"github.com/policyrun/policyrun/internal/testkit/testsync"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/record"
)

// writeConfig writes body to dir/pipeline.yaml and loads it.
func writeConfig(t *testing.T, dir, body string) *config.Config {
	t.Helper()
	writeFile(t, dir, "pipeline.yaml", body)
	cfg, err := config.Load(filepath.Join(dir, "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// pipelineYAML is the text of a pipeline config of inputs (inputItem's)
// and rest after them: the filters and outputs sections (indented by
// two, as toStdout is), and maybe a service section.
func pipelineYAML(rest string, inputs ...string) string {
	return "\npipeline:\n  inputs:\n" + strings.Join(inputs, "") + rest
}

// inputItem is one item of a pipeline's inputs, its settings given as
// "key: value" (the first, "name: ...", opens the item).
func inputItem(settings ...string) string {
	var b strings.Builder
	b.WriteString("    - " + settings[0] + "\n")
	for _, s := range settings[1:] {
		b.WriteString("      " + s + "\n")
	}
	return b.String()
}

// tailInput is inputItem of a tail input that reads path from its head.
func tailInput(path string, settings ...string) string {
	return inputItem(append([]string{"name: tail", "path: " + path, "read_from_head: true"}, settings...)...)
}

// tailYAML is pipelineYAML of one tailInput.
func tailYAML(rest, path string, settings ...string) string {
	return pipelineYAML(rest, tailInput(path, settings...))
}

// otlpYAML is pipelineYAML of one otlp input listening on a free port.
func otlpYAML(rest string, settings ...string) string {
	return pipelineYAML(rest, inputItem(append([]string{"name: otlp", "listen: 127.0.0.1:0"}, settings...)...))
}

// tailConfig writes and loads tailYAML.
func tailConfig(t *testing.T, dir, rest, path string, settings ...string) *config.Config {
	t.Helper()
	return writeConfig(t, dir, tailYAML(rest, path, settings...))
}

// The outputs sections of tailConfig, and a filter whose processor comes
// from Options.NewProcessor.
const (
	toStdout   = "  outputs:\n    - name: stdout\n"
	toNull     = "  outputs:\n    - name: null\n"
	toFile     = "  outputs:\n    - name: file\n      path: out.log\n"
	testFilter = "  filters:\n    - name: policy\n      file: unused.policy\n"
)

// loadExample loads the config of examples/name.
func loadExample(t *testing.T, name string) *config.Config {
	t.Helper()
	cfg, err := config.Load(filepath.Join("..", "examples", name, "pipeline.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runPipeline builds the pipeline of cfg, runs it until its inputs end
// (exit_on_eof), or 20 s at most, and closes it.
func runPipeline(t *testing.T, cfg *config.Config, opts Options) *Pipeline {
	t.Helper()
	p, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// startPipeline builds the pipeline of cfg and runs it in the background
// until stop, which ends the run, waits for it and closes the pipeline.
func startPipeline(t *testing.T, cfg *config.Config, opts Options) (stop func()) {
	t.Helper()
	p, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	stopRun := background(t, p)
	return func() {
		t.Helper()
		if err := stopRun(); err != nil {
			t.Fatal(err)
		}
	}
}

// background runs p until stop, which ends the run, waits for it and
// closes p, and returns the run's error or else Close's; a second stop,
// or the test's end, returns the same without doing it again. (The test
// and its cleanup call stop from one goroutine.)
func background(t *testing.T, p *Pipeline) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	stopped := false
	var err error
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			err = <-done
			if cerr := p.Close(); err == nil {
				err = cerr
			}
		}
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

func eventually(d time.Duration, cond func() bool) bool { return testsync.Eventually(d, cond) }

// summaryText is the run summary as policyrun run prints it.
func summaryText(s Summary) string {
	var b bytes.Buffer
	s.Write(&b)
	return b.String()
}

// checkMetrics fails the test for each of wants that p's metrics lack.
func checkMetrics(t *testing.T, p *Pipeline, wants ...string) {
	t.Helper()
	var m bytes.Buffer
	p.WriteMetrics(&m)
	for _, want := range wants {
		if !strings.Contains(m.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, m.String())
		}
	}
}

// every is an Options.NewProcessor that gives every filter proc.
func every(proc Processor) func(config.Filter, string) (Processor, error) {
	return func(config.Filter, string) (Processor, error) { return proc, nil }
}

// dropDebug drops records whose "level" is "debug" and counts a fault for
// records with "fault": true: a processor for testing the plumbing around
// stages, not a stand-in for a backend (stage_test.go runs the real ones).
var dropDebug = ProcessorFunc(func(recs []*record.Record) ([]*record.Record, StageCounts) {
	var c StageCounts
	out := recs[:0]
	for _, r := range recs {
		if v, ok := r.Get(record.NewPath("level")); ok && r.Arena().Str(v) == "debug" {
			c.Dropped++
			continue
		}
		if v, ok := r.Get(record.NewPath("fault")); ok && v.Bool() {
			c.Faulted++
			c.Faults = map[string]int64{"type_mismatch": 1}
		}
		out = append(out, r)
	}
	return out, c
})

// readFile returns the content of dir/name, "" when there is no such file.
func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// writeFile writes data to dir/name, making the directories it needs.
func writeFile(t *testing.T, dir, name, data string) {
	t.Helper()
	testfs.Write(t, filepath.Join(dir, name), data)
}

// appendFile appends data to dir/name.
func appendFile(t *testing.T, dir, name, data string) {
	t.Helper()
	testfs.Append(t, filepath.Join(dir, name), data)
}
