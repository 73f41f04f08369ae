package pipeline

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/otlptest"
)

// TestFilesystemBufferDirIsAlias checks that an output's alias names its
// filesystem buffer's directory, service.data_dir/<alias>/, given or
// default (otlp.<index>, counting the outputs with an alias too): the
// chunks written while the receiver is down go there, and the next run
// replays them from there.
func TestFilesystemBufferDirIsAlias(t *testing.T) {
	tests := []struct {
		name    string
		aliases []string // one otlp output each; "" for no alias key
		dirs    []string // what data_dir holds after the first run, sorted
	}{
		{"given", []string{"primary"}, []string{"primary"}},
		{"default", []string{""}, []string{"otlp.0"}},
		{"given, then a default", []string{"primary", ""}, []string{"otlp.1", "primary"}},
		{"default, then given", []string{"", "backup"}, []string{"backup", "otlp.0"}},
	}
	const lines = 50
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "a.log", numberedLines(0, lines))
			outputs := func(url string) string {
				var b strings.Builder
				b.WriteString("  outputs:\n")
				for _, a := range tt.aliases {
					b.WriteString("    - name: otlp\n      endpoint: " + url + "\n")
					b.WriteString("      retry: {initial_interval: 10ms, max_interval: 50ms}\n")
					b.WriteString("      buffer: {type: filesystem}\n")
					if a != "" {
						b.WriteString("      alias: " + a + "\n")
					}
				}
				return b.String()
			}
			run := func(url string, receiverUp bool) *Pipeline {
				cfg := tailConfig(t, dir, outputs(url)+dataDirService(receiverUp), "a.log", "parser: json", "poll_interval: 10ms",
					"db: tail.db", "exit_on_eof: true")
				return runPipeline(t, cfg, Options{Logger: slog.New(slog.DiscardHandler)})
			}

			// The receiver is down: every output keeps its chunks.
			p := run(downURL(t), false)
			for i, o := range p.Summary().Outputs {
				if o.BufferChunks == 0 || o.Out != 0 {
					t.Fatalf("output %d (%s) = %+v, want chunks held", i, o.Alias, o)
				}
			}
			entries, err := os.ReadDir(filepath.Join(dir, "data"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			if !slices.Equal(got, tt.dirs) {
				t.Fatalf("data_dir holds %q, want %q", got, tt.dirs)
			}
			for _, d := range tt.dirs {
				if files, _ := filepath.Glob(filepath.Join(dir, "data", d, "*.chunk")); len(files) == 0 {
					t.Errorf("no chunk files under data_dir/%s", d)
				}
			}

			// The receiver is up: the chunks are replayed from the same
			// directories; the tail reads nothing again.
			rc := otlptest.New(t)
			srv := httptest.NewServer(rc)
			defer srv.Close()
			p = run(srv.URL, true)
			rc.Each(t, lines)
			if s := p.Summary(); s.In != 0 {
				t.Errorf("the second run read %d lines again", s.In)
			}
			for i, o := range p.Summary().Outputs {
				if o.Out != lines || o.BufferChunks != 0 {
					t.Errorf("second run: output %d (%s) = %+v, want %d out of the buffer", i, o.Alias, o, lines)
				}
			}
			for _, d := range tt.dirs {
				if files, _ := filepath.Glob(filepath.Join(dir, "data", d, "*.chunk")); len(files) != 0 {
					t.Errorf("data_dir/%s still holds %q after the replay", d, files)
				}
			}
		})
	}
}
