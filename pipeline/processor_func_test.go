package pipeline_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/policyrun/policyrun/pipeline"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/record"
)

func TestProcessorFunc(t *testing.T) {
	a := record.NewArena()
	var recs []*record.Record
	for _, l := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
		r, err := a.DecodeJSON([]byte(l), record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	var p pipeline.Processor = pipeline.ProcessorFunc(func(recs []*record.Record) ([]*record.Record, pipeline.StageCounts) {
		return recs[1:], pipeline.StageCounts{Dropped: 1}
	})
	kept, c := p.Process(recs)
	if len(kept) != 2 || kept[0] != recs[1] || c.Dropped != 1 {
		t.Errorf("Process = %d records, %+v; want the last two, 1 dropped", len(kept), c)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

// A stage written in Go: Options.NewProcessor returns it for the filter
// that names it, here one that drops debug records.
func ExampleProcessorFunc() {
	dir, err := os.MkdirTemp("", "pipeline-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		"app.log": `{"level":"debug","msg":"a"}` + "\n" + `{"level":"info","msg":"b"}` + "\n",
		"pipeline.yaml": `
pipeline:
  inputs:
    - name: tail
      path: app.log
      parser: json
      read_from_head: true
      exit_on_eof: true
  filters:
    - name: policy
      file: drop-debug
  outputs:
    - name: stdout
`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, "pipeline.yaml"))
	if err != nil {
		log.Fatal(err)
	}
	level := record.NewPath("level")
	dropDebug := pipeline.ProcessorFunc(func(recs []*record.Record) ([]*record.Record, pipeline.StageCounts) {
		var c pipeline.StageCounts
		kept := recs[:0]
		for _, r := range recs {
			if v, ok := r.Get(level); ok && r.Arena().Str(v) == "debug" {
				c.Dropped++
				continue
			}
			kept = append(kept, r)
		}
		return kept, c
	})
	p, err := pipeline.New(cfg, pipeline.Options{
		Stdout: os.Stdout,
		NewProcessor: func(f config.Filter, dir string) (pipeline.Processor, error) {
			if f.File == "drop-debug" {
				return dropDebug, nil
			}
			return pipeline.NewStage(f, dir)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := p.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
	if err := p.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("dropped", p.Summary().Dropped)
	// Output:
	// {"level":"info","msg":"b"}
	// dropped 1
}
