// Package config reads a pipeline's YAML configuration (inputs, policy stages,
// outputs), laid out like Fluent Bit's YAML so its users feel at home.
// Every unknown key and wrongly typed value is reported with its line before
// anything starts.
package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/luascript"
	"github.com/policyrun/policyrun/spec"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/pipeline/output"
	"github.com/policyrun/policyrun/pipeline/parse"
	"github.com/policyrun/policyrun/pipeline/tail"
)

// Config is a whole pipeline: inputs → filters (policy stages, in order) → outputs.
type Config struct {
	Service Service
	Inputs  []Input
	Filters []Filter
	Outputs []Output

	// Dir is the directory of the config file; relative paths in it
	// (policy files, scripts, checkpoint files) are resolved against it.
	Dir string
	// File is the config file Load read, which a reload reads again;
	// empty for a config from Parse.
	File string
}

// Service holds process-wide settings.
type Service struct {
	// Metrics is a loopback address ("127.0.0.1:2021") for the Prometheus
	// text endpoint; empty means no endpoint.
	Metrics string
	// BatchSize bounds how many lines an input reads into one batch, so
	// how many records go through the stages at once. Each batch ends
	// with a checkpoint save.
	BatchSize int
	// DataDir is where outputs keep their filesystem buffers, each in
	// DataDir/<alias>, and filters their state, in DataDir/state;
	// relative to the config's directory.
	DataDir string
	// StateMemoryLimit bounds the bytes the filters' dedupe, rate_limit
	// and sample statements may hold together, at worst (their max_keys
	// each): a pipeline past it does not start. 0 means
	// spec.DefaultStateMemory.
	StateMemoryLimit int64
	// Grace bounds how long a stop waits for the outputs to deliver what
	// they hold (DefaultGrace).
	Grace time.Duration
	// Threads is the most goroutines that run Go code at once
	// (GOMAXPROCS), as Vector's --threads; 0 leaves Go's default (the
	// CPUs the process may use, or the GOMAXPROCS variable). The process
	// that runs the pipeline sets it: a library embedding one does not.
	Threads int
	// MultilineParsers are the user's multiline rules, which inputs name
	// in multiline.parsers beside the built-in ones.
	MultilineParsers []*parse.Rule
	// Watch reloads the pipeline when the config file or a policy or
	// script it names changes, as SIGHUP does; the files are polled every
	// WatchInterval (DefaultWatchInterval).
	Watch         bool
	WatchInterval time.Duration

	keys sectionKeys // as written, for Diff
}

// DefaultGrace is service.grace's default, as Fluent Bit's.
const DefaultGrace = 5 * time.Second

// DefaultWatchInterval is service.watch_interval's default: a changed
// policy runs within 5 s, for a stat of each watched file (and a hash of
// the ones whose stat changed) every 5 s. Vector polls its config every
// 30 s when it cannot be notified; a ConfigMap's update takes up to a
// minute to reach a pod anyway.
const DefaultWatchInterval = 5 * time.Second

// Input is one input section. Only tail exists today.
type Input struct {
	Line int // line of the section in the config, for later messages

	Name   string // "tail"
	Alias  string // names the input in logs, metrics and the summary; tail.0 … by default
	Tag    string
	Parser string // json | cri | docker | logfmt | raw
	DB     string // checkpoint file; empty means no checkpoints
	// KubernetesPath sets .kubernetes.pod_name, namespace_name,
	// container_name, container_id and pod_id from a container log's
	// path, where the record has none of its own (kubernetes_path).
	KubernetesPath bool
	// Multiline joins the lines of a stack trace into one record, after
	// Parser (raw, cri or docker); nil: each line is a record.
	Multiline *Multiline

	// Config is the tail's part of the section, with the tail's defaults
	// where the section says nothing. Paths and ExcludePaths are the glob
	// patterns as written (the pipeline resolves relative ones against
	// Dir). MaxBatchBytes, MaxBatchLines, Attributes and Logger are not
	// read from the section: the pipeline sets MaxBatchLines from
	// Service.BatchSize, and its Logger.
	tail.Config

	// OTLP is an otlp input's part of the section.
	OTLP OTLPInput

	keys sectionKeys // as written, for Diff
}

// OTLPInput is an otlp input's keys.
type OTLPInput struct {
	Listen         string // host:port, DefaultOTLPListen
	MaxRequestSize int64  // the most bytes of a request's body, before and after decompression
	// MaxRequestRecords is the most LogRecords a request may hold: bytes
	// do not bound what a request expands to (an empty LogRecord is two
	// bytes on the wire and a record in memory).
	MaxRequestRecords int
	// ReadTimeout bounds the reading of a request, its headers and body:
	// a client that stalls is answered 408 and its connection closed.
	ReadTimeout time.Duration
	// MaxInflightSize bounds the bytes of the requests in hand, all
	// together: their bodies (reserved before they are read), the bodies
	// decompressed and the records they decode to. A request that would
	// pass it is answered 503 with Retry-After.
	MaxInflightSize int64
	// TLS: a certificate and key make the server HTTPS; a client CA file
	// makes it require client certificates signed by it (mutual TLS).
	CertFile, KeyFile, ClientCAFile string
	listenLine                      int
}

// The otlp input's defaults, as the OpenTelemetry Collector's OTLP
// receiver has them (but on loopback only until told otherwise), and the
// bounds the Collector lacks: its read_timeout has no default (a stalled
// body holds its connection for ever), ours is its write_timeout's; its
// records per request are unbounded, ours four times the batch
// processor's default batch (8,192).
const (
	DefaultOTLPListen            = "127.0.0.1:4318"
	DefaultOTLPMaxRequestSize    = 20 << 20
	DefaultOTLPMaxRequestRecords = 32768
	DefaultOTLPReadTimeout       = 30 * time.Second
	DefaultOTLPMaxInflightSize   = 128 << 20
)

// Filter is one policy stage.
type Filter struct {
	Line int

	Name    string // "policy" (a compiled policy) or "lua" (a Fluent Bit-style script)
	Alias   string // names the filter in logs, metrics and the summary; policy.0, lua.0 … by default
	Match   string // tag pattern with '*' wildcards; "*" by default
	File    string // the .policy file or, for lua, the script
	Backend string // vm | lua | lua_script
	Call    string // the Lua function for lua_script

	// Fluent Bit's options of its lua filter (filter lua only).
	Code          string   // code: the script inline, instead of script (File "")
	TimeAsTable   bool     // time_as_table: the timestamp as {sec, nsec}
	TypeIntKeys   []string // type_int_key: keys whose numbers become ints
	TypeArrayKeys []string // type_array_key: keys whose tables are arrays
	// ProtectedMode is protected_mode, true unless set false; false is
	// accepted with a warning, and the filter stays protected.
	ProtectedMode bool
	AllowGetenv   bool // allow_getenv: os.getenv reads the environment
	// The limits of a lua_script's runs (docs/lua.md, "Limits"):
	// time_limit per call and for the script's top level at load,
	// memory_limit per LState; luascript.DefaultLimits unless the section
	// says otherwise, 0 for none.
	TimeLimit   time.Duration
	MemoryLimit int64

	// Params are the values of the policy's parameters (filter policy
	// only), each with its line: the stage checks them against the
	// policy's declarations when it loads it.
	Params spec.Params
	// MaxSplit is max_split, the most records one split of the policy
	// may make of a record (spec.Limits.MaxSplit, the fault split_limit);
	// 0: spec.DefaultLimits'.
	MaxSplit int
}

// Output is one output section.
type Output struct {
	Line int

	Name  string // a registered output type: null, stdout, file, …
	Alias string // names the output in logs, metrics and the summary; file.0 … by default
	Match string
	// Settings are the section's keys of its type (*output.FileConfig
	// for file), decoded over the type's defaults.
	Settings output.Settings

	keys sectionKeys // as written, for Diff
}

// Error is one problem in a config file.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ErrorList is every problem found in a config file, in line order.
type ErrorList []*Error

func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Load reads and validates the config at path. The error, if any, is an
// ErrorList holding every problem, or an I/O error.
func Load(path string) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := Parse(path, src)
	if err != nil {
		return nil, err
	}
	cfg.Dir, cfg.File = filepath.Dir(path), path
	return cfg, nil
}

// Parse reads a config from src; filename is used in messages only.
func Parse(filename string, src []byte) (*Config, error) {
	d := &decoder{file: filename}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, ErrorList{{File: filename, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	cfg := &Config{Service: Service{BatchSize: tail.DefaultMaxBatchLines, Grace: DefaultGrace, WatchInterval: DefaultWatchInterval}}
	if len(doc.Content) == 0 {
		d.errorf(0, "the file is empty: it needs a pipeline section with inputs and outputs")
		return nil, d.errs
	}
	root := doc.Content[0]
	d.mapping(root, "the top level", map[string]func(*yaml.Node){
		"service":  func(n *yaml.Node) { d.service(n, &cfg.Service) },
		"pipeline": func(n *yaml.Node) { d.pipeline(n, cfg) },
	})
	if root.Kind == yaml.MappingNode && len(cfg.Inputs) == 0 && !d.hasKey(root, "pipeline") {
		d.errorf(root.Line, "no pipeline section: write pipeline: {inputs: [...], outputs: [...]}")
	}
	d.resolveMultiline(cfg)
	d.aliases(cfg)
	cfg.Dir = filepath.Dir(filename)
	d.validate(cfg)
	if len(d.errs) > 0 {
		sort.SliceStable(d.errs, func(i, j int) bool { return d.errs[i].Line < d.errs[j].Line })
		return nil, d.errs
	}
	return cfg, nil
}

func (d *decoder) service(n *yaml.Node, s *Service) {
	s.keys = keysOf(n)
	d.mapping(n, "service", map[string]func(*yaml.Node){
		"metrics":            func(v *yaml.Node) { s.Metrics = d.loopback(v) },
		"batch_size":         func(v *yaml.Node) { s.BatchSize = d.intv(v) },
		"data_dir":           func(v *yaml.Node) { s.DataDir = d.str(v) },
		"grace":              func(v *yaml.Node) { s.Grace = d.duration(v) },
		"state_memory_limit": func(v *yaml.Node) { s.StateMemoryLimit = positive(d, v, "state_memory_limit", d.size) },
		"threads":            func(v *yaml.Node) { s.Threads = d.intv(v) },
		"watch":              func(v *yaml.Node) { s.Watch = d.boolv(v) },
		"watch_interval":     func(v *yaml.Node) { s.WatchInterval = positive(d, v, "watch_interval", d.duration) },

		"multiline_parsers": func(v *yaml.Node) { d.multilineParsers(v, s) },
	})
}

func (d *decoder) pipeline(n *yaml.Node, cfg *Config) {
	d.mapping(n, "pipeline", map[string]func(*yaml.Node){
		"inputs": func(v *yaml.Node) {
			d.sections(v, "inputs", func(s *yaml.Node) { cfg.Inputs = append(cfg.Inputs, d.input(s)) })
		},
		"filters": func(v *yaml.Node) {
			d.sections(v, "filters", func(s *yaml.Node) { cfg.Filters = append(cfg.Filters, d.filter(s)) })
		},
		"outputs": func(v *yaml.Node) {
			d.sections(v, "outputs", func(s *yaml.Node) { cfg.Outputs = append(cfg.Outputs, d.output(s)) })
		},
	})
}

func (d *decoder) input(n *yaml.Node) Input {
	in := Input{
		Line:   n.Line,
		Parser: "raw",
		Tag:    "tail",
		Config: tail.Config{
			PollInterval:    tail.DefaultPollInterval,
			RefreshInterval: tail.DefaultRefreshInterval,
			RotateWait:      tail.DefaultRotateWait,
			FlushTimeout:    tail.DefaultFlushTimeout,
			FingerprintSize: tail.DefaultFingerprintSize,
			MaxLineSize:     tail.DefaultMaxLineSize,
		},
	}
	name := d.sectionName(n, "input", []string{"tail", "otlp"})
	in.Name, in.keys = name, keysOf(n)
	keys := map[string]func(*yaml.Node){
		"name":  func(*yaml.Node) {},
		"alias": func(v *yaml.Node) { in.Alias = d.alias(v) },
		"tag":   func(v *yaml.Node) { in.Tag = d.str(v) },
	}
	switch name {
	case "tail":
		for k, f := range map[string]func(*yaml.Node){
			"path":                 func(v *yaml.Node) { in.Paths = d.patterns(v) },
			"exclude_path":         func(v *yaml.Node) { in.ExcludePaths = d.patterns(v) },
			"parser":               func(v *yaml.Node) { in.Parser = d.oneOf(v, "parser", "json", "cri", "docker", "logfmt", "raw") },
			"read_from_head":       func(v *yaml.Node) { in.ReadFromHead = d.boolv(v) },
			"poll_interval":        func(v *yaml.Node) { in.PollInterval = d.duration(v) },
			"refresh_interval":     func(v *yaml.Node) { in.RefreshInterval = d.duration(v) },
			"rotate_wait":          func(v *yaml.Node) { in.RotateWait = d.duration(v) },
			"flush_timeout":        func(v *yaml.Node) { in.FlushTimeout = d.duration(v) },
			"fingerprint_size":     func(v *yaml.Node) { in.FingerprintSize = int(d.size(v)) },
			"max_line_size":        func(v *yaml.Node) { in.MaxLineSize = int(d.size(v)) },
			"skip_long_lines":      func(v *yaml.Node) { in.SkipLongLines = d.boolv(v) },
			"exit_on_eof":          func(v *yaml.Node) { in.ExitOnEOF = d.boolv(v) },
			"max_concurrent_files": func(v *yaml.Node) { in.MaxConcurrentFiles = positive(d, v, "max_concurrent_files", d.intv) },
			"db":                   func(v *yaml.Node) { in.DB = d.str(v) },
			"kubernetes_path":      func(v *yaml.Node) { in.KubernetesPath = d.boolv(v) },
			"multiline":            func(v *yaml.Node) { in.Multiline = d.multiline(v) },
		} {
			keys[k] = f
		}
	case "otlp":
		in.Tag, in.Parser = "otlp", ""
		o := &in.OTLP
		o.Listen, o.MaxRequestSize = DefaultOTLPListen, DefaultOTLPMaxRequestSize
		o.MaxRequestRecords, o.ReadTimeout, o.MaxInflightSize = DefaultOTLPMaxRequestRecords, DefaultOTLPReadTimeout, DefaultOTLPMaxInflightSize
		keys["listen"] = func(v *yaml.Node) {
			o.Listen, o.listenLine = d.str(v), v.Line
			if _, port, err := net.SplitHostPort(o.Listen); err != nil || !validPort(port) {
				d.errorf(v.Line, "listen %q: expected host:port, such as 127.0.0.1:4318 or 0.0.0.0:4318", o.Listen)
			}
		}
		keys["max_request_size"] = func(v *yaml.Node) { o.MaxRequestSize = positive(d, v, "max_request_size", d.size) }
		keys["max_request_records"] = func(v *yaml.Node) { o.MaxRequestRecords = positive(d, v, "max_request_records", d.intv) }
		keys["read_timeout"] = func(v *yaml.Node) {
			o.ReadTimeout = positive(d, v, "read_timeout", d.duration, "a stalled client would hold its connection for ever")
		}
		keys["max_inflight_size"] = func(v *yaml.Node) { o.MaxInflightSize = positive(d, v, "max_inflight_size", d.size) }
		tlsKeys := map[string]func(*yaml.Node){
			"cert_file":      func(v *yaml.Node) { o.CertFile = d.str(v) },
			"key_file":       func(v *yaml.Node) { o.KeyFile = d.str(v) },
			"client_ca_file": func(v *yaml.Node) { o.ClientCAFile = d.str(v) },
		}
		keys["tls"] = func(v *yaml.Node) { d.mapping(v, "tls", tlsKeys) }
		for k, f := range tlsKeys {
			keys["tls."+k] = f
		}
	}
	d.mapping(n, "input "+name, keys)
	if n.Kind != yaml.MappingNode {
		return in
	}
	switch {
	case name == "tail" && len(in.Paths) == 0:
		d.errorf(n.Line, "input tail needs a path (a glob such as /var/log/containers/*.log)")
	case name == "otlp" && (in.OTLP.CertFile == "") != (in.OTLP.KeyFile == ""):
		d.errorf(n.Line, "tls.cert_file and tls.key_file go together (the server's certificate and its key)")
	case name == "otlp" && in.OTLP.ClientCAFile != "" && in.OTLP.CertFile == "":
		d.errorf(n.Line, "tls.client_ca_file (mutual TLS) needs tls.cert_file and tls.key_file")
	case name == "otlp" && in.OTLP.MaxInflightSize < in.OTLP.MaxRequestSize:
		d.errorf(n.Line, "max_inflight_size (%d bytes) is less than max_request_size (%d): a request of the largest size could never be read", in.OTLP.MaxInflightSize, in.OTLP.MaxRequestSize)
	}
	return in
}

func validPort(s string) bool {
	p, err := strconv.Atoi(s)
	return err == nil && p >= 0 && p <= 65535 && !strings.HasPrefix(s, "+")
}

// ScriptBackend is the Backend of a filter that runs a Fluent Bit-style Lua
// script (filter lua, or filter policy with backend lua_script) rather
// than a policy on one of package backend's backends.
const ScriptBackend = "lua_script"

func (d *decoder) filter(n *yaml.Node) Filter {
	f := Filter{Line: n.Line, Match: "*", TimeLimit: luascript.DefaultTimeLimit, MemoryLimit: luascript.DefaultMemoryLimit}
	maxSplitLine := 0
	name := d.sectionName(n, "filter", []string{"policy", "lua"})
	f.Name = name
	keys := map[string]func(*yaml.Node){
		"name":  func(*yaml.Node) {},
		"alias": func(v *yaml.Node) { f.Alias = d.alias(v) },
		"match": func(v *yaml.Node) { f.Match = d.str(v) },
	}
	switch name {
	case "policy":
		f.Backend = backend.Names()[0]
		keys["file"] = func(v *yaml.Node) { f.File = d.str(v) }
		keys["backend"] = func(v *yaml.Node) { f.Backend = d.oneOf(v, "backend", append(backend.Names(), ScriptBackend)...) }
		keys["call"] = func(v *yaml.Node) { f.Call = d.str(v) }
		keys["params"] = func(v *yaml.Node) { f.Params = d.params(v) }
		keys["max_split"] = func(v *yaml.Node) {
			why := fmt.Sprintf("%s; %d by default", spec.MaxSplitMeaning, spec.DefaultLimits.MaxSplit)
			f.MaxSplit, maxSplitLine = positive(d, v, "max_split", d.intv, why), v.Line
		}
	case "lua":
		// Fluent Bit's own spelling of a Lua filter: script + call.
		f.Backend = ScriptBackend
		f.ProtectedMode = true
		keys["script"] = func(v *yaml.Node) { f.File = d.str(v) }
		keys["call"] = func(v *yaml.Node) { f.Call = d.str(v) }
		keys["code"] = func(v *yaml.Node) { f.Code = d.str(v) }
		keys["time_as_table"] = func(v *yaml.Node) { f.TimeAsTable = d.boolv(v) }
		keys["type_int_key"] = func(v *yaml.Node) { f.TypeIntKeys = d.keyList(v) }
		keys["type_array_key"] = func(v *yaml.Node) { f.TypeArrayKeys = d.keyList(v) }
		keys["protected_mode"] = func(v *yaml.Node) { f.ProtectedMode = d.boolv(v) }
		keys["allow_getenv"] = func(v *yaml.Node) { f.AllowGetenv = d.boolv(v) }
	}
	limitLine := 0
	if name != "" {
		keys["time_limit"] = func(v *yaml.Node) { f.TimeLimit, limitLine = d.duration(v), v.Line }
		keys["memory_limit"] = func(v *yaml.Node) { f.MemoryLimit, limitLine = d.size(v), v.Line }
	}
	d.mapping(n, "filter "+name, keys)
	if n.Kind != yaml.MappingNode || name == "" {
		return f
	}
	switch {
	case f.File != "" && f.Code != "":
		d.errorf(n.Line, "filter lua takes script or code, not both")
	case f.File == "" && f.Code == "" && name == "lua":
		d.errorf(n.Line, "filter lua needs script (the Lua file to run) or code (the script inline)")
	case name == "lua":
	case f.File == "":
		d.errorf(n.Line, "filter policy needs file: the .policy file to run")
	}
	switch {
	case f.Backend == ScriptBackend && f.Call == "":
		d.errorf(n.Line, "a Lua script filter needs call: the name of the function to call for each record")
	case f.Backend != ScriptBackend && f.Call != "":
		d.errorf(n.Line, "call is only for backend lua_script (a Fluent Bit-style Lua filter)")
	}
	if f.Backend == ScriptBackend && f.Params != nil {
		d.errorf(n.Line, "params are only for a policy: a Lua script has no parameters")
	}
	if f.Backend == ScriptBackend && maxSplitLine > 0 {
		d.errorf(maxSplitLine, "max_split is only for a policy: a Lua script returns the records it makes")
	}
	if f.Backend != ScriptBackend && limitLine > 0 {
		d.errorf(limitLine, "time_limit and memory_limit are only for backend lua_script (a Fluent Bit-style Lua filter)")
	}
	return f
}

// keyList reads the keys of type_int_key and type_array_key: one string
// of space-separated keys, as Fluent Bit reads them, or a list.
func (d *decoder) keyList(n *yaml.Node) []string {
	if n.Kind == yaml.SequenceNode {
		return d.strList(n)
	}
	return strings.Fields(d.str(n))
}

func (d *decoder) output(n *yaml.Node) Output {
	o := Output{Line: n.Line, Match: "*"}
	name := d.sectionName(n, "output", output.Names())
	o.Name, o.keys = name, keysOf(n)
	keys := map[string]func(*yaml.Node){
		"name":  func(*yaml.Node) {},
		"alias": func(v *yaml.Node) { o.Alias = d.alias(v) },
		"match": func(v *yaml.Node) { o.Match = d.str(v) },
	}
	if f, ok := output.Lookup(name); ok {
		o.Settings = f.NewSettings()
		for k, set := range o.Settings.Keys(values{d}) {
			keys[k] = set
		}
	}
	d.mapping(n, "output "+name, keys)
	if o.Settings != nil && n.Kind == yaml.MappingNode {
		o.Settings.Check(values{d}, n.Line)
	}
	return o
}

// aliases gives every section without an alias its default, as Fluent Bit
// names plugin instances: the plugin's name and its index among the
// sections of that name, in config order (tail.0, policy.1, lua.0,
// file.0), counting the sections that have an alias too. Aliases name a
// section in logs, metric labels and the run summary, so two sections of
// the pipeline, of any kind, cannot share one.
func (d *decoder) aliases(cfg *Config) {
	index := map[string]int{}
	type owner struct {
		kind  string
		line  int
		given bool
	}
	owners := map[string]owner{}
	name := func(kind, name string, alias *string, line int) {
		if name == "" {
			return // an unknown plugin, already reported
		}
		i := index[kind+" "+name]
		index[kind+" "+name]++
		given := *alias != ""
		if !given {
			*alias = fmt.Sprintf("%s.%d", name, i)
		}
		// Two defaults of different kinds (an otlp input and an otlp
		// output, both otlp.0) are told apart by their kind, as in
		// Fluent Bit; any other clash is an error.
		if first, taken := owners[*alias]; taken && (first.kind == kind || first.given || given) {
			d.errorf(line, "alias %s is already the alias of the %s at line %d; each input, filter and output needs its own", *alias, first.kind, first.line)
			return
		}
		if _, taken := owners[*alias]; !taken {
			owners[*alias] = owner{kind, line, given}
		}
	}
	for i := range cfg.Inputs {
		in := &cfg.Inputs[i]
		name("input", in.Name, &in.Alias, in.Line)
	}
	for i := range cfg.Filters {
		f := &cfg.Filters[i]
		name("filter", f.Name, &f.Alias, f.Line)
	}
	for i := range cfg.Outputs {
		o := &cfg.Outputs[i]
		name("output", o.Name, &o.Alias, o.Line)
	}
}

// validate checks what no single section can: that there is something to read
// from and somewhere to write to.
func (d *decoder) validate(cfg *Config) {
	if len(d.errs) > 0 {
		return
	}
	if len(cfg.Inputs) == 0 {
		d.errorf(0, "the pipeline has no inputs")
	}
	if len(cfg.Outputs) == 0 {
		d.errorf(0, "the pipeline has no outputs (use name: null to discard records)")
	}
	if cfg.Service.BatchSize <= 0 {
		d.errorf(0, "service batch_size must be positive")
	}
	if cfg.Service.Threads < 0 {
		d.errorf(0, "service threads must be positive (or 0: as many as the CPUs the process may use)")
	}
	for _, o := range cfg.Outputs {
		if u, ok := o.Settings.(output.DataDirUser); ok && cfg.Service.DataDir == "" {
			if line, needs := u.NeedsDataDir(); needs {
				d.errorf(line, "a filesystem buffer needs service.data_dir: the directory where outputs keep their chunks (each in data_dir/<alias>)")
			}
		}
	}
	// Two inputs saving to one checkpoint file overwrite each other's
	// state; two file outputs on one path corrupt it; an output that an
	// input matches is read back for ever. Paths are compared resolved
	// (absolute, cleaned, symlinks evaluated as far as the path exists), so
	// that out.log, ./out.log and /abs/dir/out.log are one file.
	listens := map[string]int{}
	for _, in := range cfg.Inputs {
		if in.Name != "otlp" {
			continue
		}
		if first, taken := listens[in.OTLP.Listen]; taken {
			d.errorf(in.Line, "listen %s is already the address of the input at line %d", in.OTLP.Listen, first)
		}
		listens[in.OTLP.Listen] = in.Line
	}
	dbs := map[string]int{}
	for _, in := range cfg.Inputs {
		if in.DB == "" {
			continue
		}
		if first, taken := claim(dbs, Canonical(cfg.Dir, in.DB), in.Line); taken {
			d.errorf(in.Line, "db %s is already the checkpoint file of the input at line %d; each input needs its own", in.DB, first)
		}
	}
	outs := map[string]int{}
	for _, o := range cfg.Outputs {
		fo, ok := o.Settings.(output.FileSettings)
		if !ok || fo.File() == "" {
			continue
		}
		file := fo.File()
		path := Canonical(cfg.Dir, file)
		if first, taken := claim(outs, path, o.Line); taken {
			d.errorf(o.Line, "output file %s is already written by the output at line %d", file, first)
			continue
		}
		if line, ok := dbs[path]; ok {
			d.errorf(o.Line, "output file %s is the checkpoint file (db) of the input at line %d", file, line)
		}
		abs := absClean(cfg.Dir, file)
		for _, in := range cfg.Inputs {
			if pat := matchesOutput(cfg.Dir, in, fo, path, abs); pat != "" {
				d.errorf(o.Line, "output file %s would be read back by the input at line %d (path %s)", file, in.Line, pat)
			}
		}
	}
}

// claim records in owners (resolved path to line) that the section at line
// uses the file path, one file however it is spelt (a/../b is b), unless a
// section used it before: then it returns that section's line and taken.
func claim(owners map[string]int, path string, line int) (first int, taken bool) {
	path = filepath.Clean(path)
	if first, taken = owners[path]; !taken {
		owners[path] = line
	}
	return first, taken
}

// absClean is path, relative to dir unless absolute, made absolute and
// cleaned.
func absClean(dir, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return filepath.Clean(path)
}

// Canonical resolves path as the pipeline opens it (relative to dir unless
// absolute), then makes it absolute and clean, and evaluates the symlinks
// of its longest part that exists: the file itself when it exists, else
// its directory, and so on up. Two spellings of one file, present or to be
// created, give one string.
func Canonical(dir, path string) string {
	path = absClean(dir, path)
	rest := ""
	for p := path; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// canonicalPattern resolves a glob pattern as Canonical does its part
// before the first element with a wildcard; the rest stays as written.
func canonicalPattern(dir, pat string) string {
	pat = absClean(dir, pat)
	lit, rest := pat, ""
	for hasMeta(lit) {
		rest = filepath.Join(filepath.Base(lit), rest)
		lit = filepath.Dir(lit)
	}
	return filepath.Join(Canonical("", lit), rest)
}

func hasMeta(path string) bool { return strings.ContainsAny(path, `*?[\`) }

// matchesOutput returns the pattern of patterns that matches the output
// file, resolved (path) or only made absolute (abs), or one of the files
// it writes beside it (its rotated names, its state file), or "", unless
// the input excludes it (exclude_path).
func matchesOutput(dir string, in Input, fo output.FileSettings, path, abs string) string {
	excluded := func(name string) bool {
		for _, x := range in.ExcludePaths {
			for _, xp := range []string{canonicalPattern(dir, x), absClean(dir, x)} {
				if ok, _ := filepath.Match(xp, name); ok {
					return true
				}
			}
		}
		return false
	}
	for _, pat := range in.Paths {
		for _, m := range [][2]string{{canonicalPattern(dir, pat), path}, {absClean(dir, pat), abs}} {
			for _, name := range append([]string{m[1]}, fo.Related(m[1])...) {
				if ok, _ := filepath.Match(m[0], name); ok && !excluded(name) {
					return pat
				}
			}
		}
	}
	return ""
}
