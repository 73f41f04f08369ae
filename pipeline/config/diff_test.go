package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const diffBase = `
service:
  grace: 5s
pipeline:
  inputs:
    - name: tail
      path: a.log
    - name: otlp
      alias: gw
  filters:
    - name: policy
      file: p.policy
  outputs:
    - name: file
      path: out.log
      match: "*"
    - name: null
      alias: sink
`

// TestDiff compares configs as a reload does: inputs and outputs by alias,
// key by key, as written; service by key; filters not at all.
func TestDiff(t *testing.T) {
	base := diffBase
	tests := []struct {
		name string
		edit func(string) string
		want Changes
	}{
		{"nothing", func(s string) string { return s }, Changes{}},
		{"comments, spacing, quoting, key order, lines", func(s string) string {
			s = strings.Replace(s, "    - name: tail\n      path: a.log\n", "    # the app\n\n    - path:   'a.log'   # its log\n      name: tail\n", 1)
			return strings.Replace(s, "grace: 5s", "grace: \"5s\"", 1)
		}, Changes{}},
		{"filters", func(s string) string { return strings.Replace(s, "p.policy", "q.policy", 1) }, Changes{}},
		{"an input's key", func(s string) string { return strings.Replace(s, "a.log", "b.log", 1) },
			Changes{Inputs: []Change{{Alias: "tail.0", Keys: []string{"path"}}}}},
		{"a key added (a default written out) and one case", func(s string) string {
			return strings.Replace(s, "      alias: gw\n", "      alias: gw\n      LISTEN: 127.0.0.1:4318\n", 1)
		}, Changes{Inputs: []Change{{Alias: "gw", Keys: []string{"listen"}}}}},
		{"an input added before: default aliases shift", func(s string) string {
			return strings.Replace(s, "  inputs:\n", "  inputs:\n    - name: tail\n      path: c.log\n", 1)
		}, Changes{Inputs: []Change{{Alias: "tail.0", Keys: []string{"path"}}, {Alias: "tail.1", Added: true}}}},
		{"an input removed", func(s string) string { return strings.Replace(s, "    - name: otlp\n      alias: gw\n", "", 1) },
			Changes{Inputs: []Change{{Alias: "gw", Removed: true}}}},
		{"outputs", func(s string) string {
			s = strings.Replace(s, `match: "*"`, "match: app.*", 1)
			return strings.Replace(s, "      alias: sink\n", "      alias: sink2\n", 1)
		}, Changes{Outputs: []Change{{Alias: "file.0", Keys: []string{"match"}}, {Alias: "sink2", Added: true}, {Alias: "sink", Removed: true}}}},
		{"service", func(s string) string {
			return strings.Replace(s, "grace: 5s", "grace: 6s\n  watch: true", 1)
		}, Changes{Service: []string{"grace", "watch"}}},
	}
	old, err := Parse("p.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("p.yaml", []byte(tt.edit(base)))
			if err != nil {
				t.Fatal(err)
			}
			if got := Diff(old, cfg); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Diff = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestWatchKeys: service.watch and watch_interval, their defaults and
// their errors; Load notes the file it read.
func TestWatchKeys(t *testing.T) {
	const rest = "pipeline:\n  inputs:\n    - name: otlp\n  outputs:\n    - name: null\n"
	cfg, err := Parse("p.yaml", []byte(rest))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Service.Watch || cfg.Service.WatchInterval != 5*time.Second || DefaultWatchInterval != 5*time.Second || cfg.File != "" {
		t.Errorf("defaults: watch %v, watch_interval %v, file %q", cfg.Service.Watch, cfg.Service.WatchInterval, cfg.File)
	}
	cfg, err = Parse("p.yaml", []byte("service:\n  watch: true\n  watch_interval: 250ms\n"+rest))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Service.Watch || cfg.Service.WatchInterval != 250*time.Millisecond {
		t.Errorf("watch %v, watch_interval %v", cfg.Service.Watch, cfg.Service.WatchInterval)
	}
	if _, err := Parse("p.yaml", []byte("service:\n  watch_interval: 0s\n"+rest)); err == nil || !strings.Contains(err.Error(), "p.yaml:2: watch_interval must be more than 0") {
		t.Errorf("watch_interval 0: %v", err)
	}
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte(rest), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err := Load(path); err != nil || cfg.File != path {
		t.Errorf("Load: file %q, %v", cfg.File, err)
	}
}
