package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/luascript"
	"github.com/policyrun/policyrun/pipeline/output"
	"github.com/policyrun/policyrun/pipeline/tail"
)

const good = `
service:
  metrics: 127.0.0.1:2021
  threads: 2
pipeline:
  inputs:
    - name: tail
      tag: kube.*
      path: /var/log/containers/*.log, /var/log/pods/*.log
      parser: cri
      read_from_head: on
      poll_interval: 50ms
      refresh_interval: 10
      max_line_size: 64k
      exit_on_eof: true
      db: state/tail.db
  filters:
    - name: policy
      match: kube.*
      file: k8s.policy
    - name: lua
      script: filter.lua
      call: cb
  outputs:
    - name: file
      path: out.log
      max_size: 5M
    - name: null
`

func TestParseGood(t *testing.T) {
	cfg, err := Parse("p.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	in := cfg.Inputs[0]
	if in.Name != "tail" || in.Parser != "cri" || !in.ReadFromHead || !in.ExitOnEOF {
		t.Errorf("input = %+v", in)
	}
	if want := []string{"/var/log/containers/*.log", "/var/log/pods/*.log"}; strings.Join(in.Paths, "|") != strings.Join(want, "|") {
		t.Errorf("paths = %q", in.Paths)
	}
	if in.PollInterval != 50*time.Millisecond || in.RefreshInterval != 10*time.Second || in.RotateWait != tail.DefaultRotateWait {
		t.Errorf("durations = %v %v %v", in.PollInterval, in.RefreshInterval, in.RotateWait)
	}
	if in.MaxLineSize != 64<<10 || in.FingerprintSize != tail.DefaultFingerprintSize {
		t.Errorf("sizes = %d %d", in.MaxLineSize, in.FingerprintSize)
	}
	if f := cfg.Filters[0]; f.Backend != "vm" || f.File != "k8s.policy" || f.Match != "kube.*" {
		t.Errorf("filter 0 = %+v", f)
	}
	if f := cfg.Filters[1]; f.Backend != "lua_script" || f.File != "filter.lua" || f.Call != "cb" || f.Match != "*" ||
		f.TimeLimit != luascript.DefaultTimeLimit || f.MemoryLimit != luascript.DefaultMemoryLimit {
		t.Errorf("filter 1 = %+v", f)
	}
	if o := cfg.Outputs[0]; o.Name != "file" || *o.Settings.(*output.FileConfig) != (output.FileConfig{Path: "out.log", MaxSize: 5 << 20, MaxFiles: output.DefaultMaxFiles}) {
		t.Errorf("output 0 = %+v %+v", o, o.Settings)
	}
	if cfg.Service.Metrics != "127.0.0.1:2021" || cfg.Service.BatchSize != tail.DefaultMaxBatchLines || cfg.Service.Threads != 2 {
		t.Errorf("service = %+v", cfg.Service)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // each must appear, in order, one per error
	}{
		{"not yaml", "pipeline: [", []string{"p.yaml: not valid YAML"}},
		{"empty", "", []string{"the file is empty"}},
		{"no pipeline", "service: {}\n", []string{"p.yaml:1: no pipeline section"}},
		{"unknown top key", "pipelines:\n  inputs: []\n", []string{`p.yaml:1: the top level: unknown key "pipelines" (did you mean "pipeline"?)`, "no pipeline section"}},
		{"typo and bad type", `
pipeline:
  inputs:
    - name: tail
      path: a.log
      read_from_heads: true
      poll_interval: soon
  outputs:
    - name: null
`, []string{
			`p.yaml:6: input tail: unknown key "read_from_heads" (did you mean "read_from_head"?)`,
			`p.yaml:7: expected a duration such as 200ms, 5s or 1m, found "soon"`,
		}},
		{"buffer keys", `
pipeline:
  inputs:
    - name: tail
      path: a.log
  outputs:
    - name: otlp
      endpoint: http://127.0.0.1:4318
      buffer: {sync: normal}
    - name: otlp
      endpoint: http://127.0.0.1:4318
      buffer: {type: filesystem, sync: sometimes}
`, []string{
			"p.yaml:7: buffer.sync is for buffer.type filesystem",
			`p.yaml:12: unknown buffer sync "sometimes" (known: full, normal)`,
		}},
		{"unknown section names", `
pipeline:
  inputs:
    - name: kafka
  filters:
    - name: grep
  outputs:
    - name: es
`, []string{
			`p.yaml:4: unknown input "kafka" (known: tail, otlp)`,
			`p.yaml:6: unknown filter "grep" (known: policy, lua)`,
			`p.yaml:8: unknown output "es" (known: file, http, null, otlp, stdout)`,
		}},
		{"missing required", `
pipeline:
  inputs:
    - name: tail
  filters:
    - name: policy
    - name: policy
      file: a.policy
      backend: lua_script
  outputs:
    - name: file
`, []string{
			"p.yaml:4: input tail needs a path",
			"p.yaml:6: filter policy needs file",
			"p.yaml:7: a Lua script filter needs call",
			"p.yaml:11: output file needs path",
		}},
		{"wrong shapes", `
pipeline:
  inputs:
    name: tail
  outputs:
    - name: stdout
      match: [a, b]
`, []string{
			"p.yaml:4: inputs must be a list",
			`p.yaml:7: expected a string, found a list`,
		}},
		{"duplicate key and bad bool", `
pipeline:
  inputs:
    - name: tail
      path: a
      path: b
      exit_on_eof: maybe
  outputs:
    - name: null
`, []string{
			`p.yaml:6: input tail: key "path" is given twice (first at line 5)`,
			`p.yaml:7: expected true or false, found "maybe"`,
		}},
		{"metrics, max_files, long duration", `
service:
  metrics: myhost:2021
pipeline:
  inputs:
    - name: tail
      path: a
      poll_interval: 1e300
  outputs:
    - name: file
      path: out.log
      max_files: 0
`, []string{
			`p.yaml:3: metrics must listen on a loopback address`,
			`p.yaml:8: duration "1e300" is too long`,
			`p.yaml:12: max_files must be at least 1`,
		}},
		{"threads negative", "service:\n  threads: -1\npipeline:\n  inputs:\n    - name: tail\n      path: x\n  outputs:\n    - name: null\n",
			[]string{"service threads must be positive"}},
		{"metrics port out of range", "service:\n  metrics: localhost:65536\npipeline:\n  inputs:\n    - name: tail\n      path: x\n  outputs:\n    - name: null\n",
			[]string{`p.yaml:2: metrics address "localhost:65536": the port must be a number from 0 to 65535`}},
		{"metrics port not a number", "service:\n  metrics: 127.0.0.1:http\npipeline:\n  inputs:\n    - name: tail\n      path: x\n  outputs:\n    - name: null\n",
			[]string{`p.yaml:2: metrics address "127.0.0.1:http": the port must be a number`}},
		{"metrics on every interface unsaid", "service:\n  metrics: :2021\npipeline:\n  inputs:\n    - name: tail\n      path: x\n  outputs:\n    - name: null\n",
			[]string{`p.yaml:2: metrics must listen on a loopback address`}},
		{"metrics without port", "service:\n  metrics: localhost\npipeline:\n  inputs:\n    - name: tail\n      path: x\n  outputs:\n    - name: null\n",
			[]string{`p.yaml:2: expected an address such as 127.0.0.1:2021, found "localhost"`}},
		{"shared db, output paths, output read back", `
pipeline:
  inputs:
    - name: tail
      path: logs/*.log*
      db: tail.db
    - name: tail
      path: other.log
      db: ./tail.db
  outputs:
    - name: file
      path: out.log
    - name: file
      path: ./out.log
    - name: file
      path: logs/app.log
`, []string{
			`p.yaml:7: db ./tail.db is already the checkpoint file of the input at line 4`,
			`p.yaml:13: output file ./out.log is already written by the output at line 11`,
			`p.yaml:15: output file logs/app.log would be read back by the input at line 4 (path logs/*.log*)`,
		}},
		{"output read back through a later rotation", `
pipeline:
  inputs:
    - name: tail
      path: "logs/*.2"
  outputs:
    - name: file
      path: logs/o.txt
      max_size: 1k
`, []string{
			`p.yaml:7: output file logs/o.txt would be read back by the input at line 4 (path logs/*.2)`,
		}},
		{"patterns", "pipeline:\n  inputs:\n    - name: tail\n      path: /var/log/**/*.log\n      exclude_path: \"[a\"\n  outputs:\n    - name: null\n",
			[]string{`p.yaml:4: pattern "/var/log/**/*.log": ** is not supported`, `p.yaml:5: pattern "[a": syntax error in pattern`}},
		{"no outputs", "pipeline:\n  inputs:\n    - name: tail\n      path: x\n", []string{"the pipeline has no outputs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tt.src))
			if err == nil {
				t.Fatal("no error")
			}
			list, ok := err.(ErrorList)
			if !ok {
				t.Fatalf("error is %T, want ErrorList", err)
			}
			if len(list) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(list), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.Contains(list[i].Error(), w) {
					t.Errorf("error %d = %q, want it to contain %q", i, list[i].Error(), w)
				}
			}
		})
	}
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s, Line: 1} }

func TestSizesAndDurations(t *testing.T) {
	d := &decoder{file: "x"}
	for _, tt := range []struct {
		in   string
		want int64
	}{{"1000", 1000}, {"32k", 32 << 10}, {"32KB", 32 << 10}, {"5M", 5 << 20}, {"5MiB", 5 << 20}, {"1g", 1 << 30}} {
		if got := d.size(scalar(tt.in)); got != tt.want {
			t.Errorf("size(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{{"1", time.Second}, {"0.5", 500 * time.Millisecond}, {"200ms", 200 * time.Millisecond}, {"1m", time.Minute}} {
		if got := d.duration(scalar(tt.in)); got != tt.want {
			t.Errorf("duration(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if len(d.errs) != 0 {
		t.Errorf("unexpected errors: %v", d.errs)
	}
	for _, bad := range []string{"-1", "lots", "9999999999999G"} {
		d.size(scalar(bad))
	}
	if len(d.errs) != 3 {
		t.Errorf("want 3 errors for bad sizes, got %v", d.errs)
	}
}

func TestClaim(t *testing.T) {
	owners := map[string]int{}
	for _, tc := range []struct {
		path  string
		line  int
		first int
		taken bool
	}{
		{"a/out.log", 3, 0, false},
		{"b/out.log", 5, 0, false},
		{"a/out.log", 7, 3, true},
		{"a/../a/./out.log", 9, 3, true}, // the same file, spelt otherwise
		{"b//out.log", 11, 5, true},
		{"out.log", 13, 0, false},
	} {
		if first, taken := claim(owners, tc.path, tc.line); first != tc.first || taken != tc.taken {
			t.Errorf("claim(%q, %d) = %d, %v, want %d, %v", tc.path, tc.line, first, taken, tc.first, tc.taken)
		}
	}
	if want := map[string]int{"a/out.log": 3, "b/out.log": 5, "out.log": 13}; !reflect.DeepEqual(owners, want) {
		t.Errorf("owners = %v, want %v", owners, want)
	}
}

// TestAliases checks the default aliases (the plugin's name and its index
// among the sections of that name, as Fluent Bit names instances), that
// an alias given replaces it without shifting the others' indexes, and
// that a duplicate, given or default, is an error with its line.
func TestAliases(t *testing.T) {
	head := "pipeline:\n  inputs:\n    - name: tail\n      path: a.log\n"
	tests := []struct {
		name    string
		src     string
		inputs  []string
		filters []string
		outputs []string
		err     string
	}{
		{name: "defaults", src: head + `    - name: tail
      path: b.log
  filters:
    - name: policy
      file: a.policy
    - name: lua
      script: a.lua
      call: cb
    - name: policy
      file: b.policy
      backend: lua_script
      call: cb
  outputs:
    - name: file
      path: out.log
    - name: stdout
    - name: file
      path: out2.log
`, inputs: []string{"tail.0", "tail.1"}, filters: []string{"policy.0", "lua.0", "policy.1"}, outputs: []string{"file.0", "stdout.0", "file.1"}},
		{name: "given", src: head + `      alias: app
    - name: tail
      path: b.log
  filters:
    - name: policy
      alias: redact-pii
      file: a.policy
    - name: policy
      file: b.policy
  outputs:
    - name: null
      alias: Discard_1
`, inputs: []string{"app", "tail.1"}, filters: []string{"redact-pii", "policy.1"}, outputs: []string{"Discard_1"}},
		{name: "duplicate given", src: head + `      alias: x
  filters:
    - name: policy
      file: a.policy
      alias: x
  outputs:
    - name: null
`, err: "p.yaml:7: alias x is already the alias of the input at line 3; each input, filter and output needs its own"},
		{name: "given clashes with a default", src: head + `  filters:
    - name: policy
      file: a.policy
      alias: policy.1
    - name: policy
      file: b.policy
  outputs:
    - name: null
`, err: "p.yaml:9: alias policy.1 is already the alias of the filter at line 6"},
		{name: "bad characters", src: head + `      alias: "my input"
  outputs:
    - name: null
`, err: `p.yaml:5: alias "my input": use letters, digits and _ . - only`},
		{name: "empty", src: head + `      alias: ""
  outputs:
    - name: null
`, err: `p.yaml:5: alias "": use letters, digits and _ . - only`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("p.yaml", []byte(tt.src))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Count(err.Error(), "\n") != 0 {
					t.Fatalf("err = %v, want one error containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var inputs, filters, outputs []string
			for _, in := range cfg.Inputs {
				inputs = append(inputs, in.Alias)
			}
			for _, f := range cfg.Filters {
				filters = append(filters, f.Alias)
			}
			for _, o := range cfg.Outputs {
				outputs = append(outputs, o.Alias)
			}
			if !reflect.DeepEqual(inputs, tt.inputs) || !reflect.DeepEqual(filters, tt.filters) || !reflect.DeepEqual(outputs, tt.outputs) {
				t.Errorf("aliases %v %v %v, want %v %v %v", inputs, filters, outputs, tt.inputs, tt.filters, tt.outputs)
			}
		})
	}
}

// TestPathsCompareResolved checks that the db, output and read-back checks
// compare the files, not their spellings: an absolute spelling of a
// relative path, a path through a symlinked directory, a pattern through
// one.
func TestPathsCompareResolved(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("logs", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	src := `
pipeline:
  inputs:
    - name: tail
      path: link/*.log
      db: tail.db
    - name: tail
      path: other.log
      db: ` + filepath.Join(dir, "tail.db") + `
  outputs:
    - name: file
      path: out.log
    - name: file
      path: ` + filepath.Join(dir, "out.log") + `
    - name: file
      path: ` + filepath.Join(dir, "logs", "app.log") + `
    - name: file
      path: ` + filepath.Join(dir, "link", "..", "self.log") + `
    - name: file
      path: self.log
    - name: file
      path: tail.db
`
	name := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(name)
	want := []string{
		`p.yaml:7: db ` + filepath.Join(dir, "tail.db") + ` is already the checkpoint file of the input at line 4`,
		`p.yaml:13: output file ` + filepath.Join(dir, "out.log") + ` is already written by the output at line 11`,
		`p.yaml:15: output file ` + filepath.Join(dir, "logs", "app.log") + ` would be read back by the input at line 4 (path link/*.log)`,
		`p.yaml:19: output file self.log is already written by the output at line 17`,
		`p.yaml:21: output file tail.db is the checkpoint file (db) of the input at line 4`,
	}
	list, _ := err.(ErrorList)
	if len(list) != len(want) {
		t.Fatalf("got %v, want %d errors", err, len(want))
	}
	for i, w := range want {
		if !strings.Contains(list[i].Error(), w) {
			t.Errorf("error %d = %q, want %q", i, list[i].Error(), w)
		}
	}
	// link/../self.log: the lexical clean gives dir/self.log, as the
	// pipeline's own path joining does.
	if got, want := Canonical(dir, "link/x/y.log"), filepath.Join(evalDir(t, dir), "logs", "x", "y.log"); got != want {
		t.Errorf("Canonical = %s, want %s", got, want)
	}
}

func evalDir(t *testing.T, dir string) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestMetricsAddr(t *testing.T) {
	for _, s := range []string{"127.0.0.1:2021", "[::1]:0", "localhost:65535", "0.0.0.0:2021", "[::]:2021", "10.0.0.5:9000"} {
		if _, _, err := SplitMetricsAddr(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"localhost:65536", "127.0.0.1:99999999999", "127.0.0.1:-1", "127.0.0.1:+80", ":2021", "example.com:80", "localhost"} {
		if _, _, err := SplitMetricsAddr(s); err == nil {
			t.Errorf("%s: accepted", s)
		}
	}
}

// TestOutputReadBackExcluded: an input whose pattern would match an
// output's files but excludes them (exclude_path) does not read them back:
// the config is accepted.
func TestOutputReadBackExcluded(t *testing.T) {
	for _, exclude := range []string{"[logs/o.txt*, logs/.o.txt*]", "[logs/o.txt, logs/o.txt.*, logs/.o.txt.policyrun-state]"} {
		src := "pipeline:\n  inputs:\n    - name: tail\n      path: \"logs/*\"\n      exclude_path: " + exclude +
			"\n  outputs:\n    - name: file\n      path: logs/o.txt\n      max_size: 1k\n"
		if _, err := Parse("p.yaml", []byte(src)); err != nil {
			t.Errorf("exclude_path %s: %v", exclude, err)
		}
	}
	src := "pipeline:\n  inputs:\n    - name: tail\n      path: \"logs/*\"\n      exclude_path: logs/o.txt\n" +
		"  outputs:\n    - name: file\n      path: logs/o.txt\n      max_size: 1k\n"
	if _, err := Parse("p.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "would be read back") {
		t.Errorf("the rotated names are not excluded: %v", err)
	}
}

// TestDeadLetterKeys: dead_letter is for a filesystem buffer, and its
// max_size needs a path.
func TestDeadLetterKeys(t *testing.T) {
	const head = "service:\n  data_dir: d\npipeline:\n  inputs:\n    - name: tail\n      path: a.log\n  outputs:\n    - name: otlp\n      endpoint: http://127.0.0.1:4318\n"
	for _, tt := range []struct{ keys, err string }{
		{"      buffer: {type: filesystem}\n      dead_letter: {path: dead, max_size: 1G}\n", ""},
		{"      buffer.type: filesystem\n      dead_letter.path: dead\n", ""},
		{"      dead_letter: {path: dead}\n", "p.yaml:10: dead_letter is for buffer.type filesystem"},
		{"      buffer: {type: filesystem}\n      dead_letter: {max_size: 1G}\n", "p.yaml:11: dead_letter needs path"},
		{"      buffer: {type: filesystem}\n      dead_letter: {path: dead, max_size: 0}\n", "dead_letter.max_size must be more than 0"},
	} {
		_, err := Parse("p.yaml", []byte(head+tt.keys))
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%q: %v, want %q", tt.keys, err, tt.err)
		}
	}
}
