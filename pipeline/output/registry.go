package output

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// Outputs are components, as in the OpenTelemetry Collector: each type is a
// Factory registered by name from the file that implements it (null.go,
// file.go, otlp.go, …), with Settings that hold its section's keys and
// their defaults, and a constructor. The config package decodes a section
// through its type's Settings; the pipeline builds, starts and shuts down
// each output through its Factory. A new output is a new file, not a new
// case in a switch.

// Factory is one output type.
type Factory struct {
	Name string
	// NewSettings returns the settings of a section of this type, holding
	// the defaults; the section's keys are then decoded into them.
	NewSettings func() Settings
	// New builds an output from its decoded settings. Under env.Check it
	// only checks what it can without creating anything (run --check).
	New func(s Settings, env Env) (Output, error)
}

// Settings are the keys of one output type's section.
type Settings interface {
	// Keys returns the section's keys of this type (name, alias and match
	// are the config's), each decoding its value into the settings.
	Keys(v Values) map[string]func(*yaml.Node)
	// Check reports what the keys cannot say one by one (a missing
	// required key) through v, at the section's line.
	Check(v Values, line int)
}

// Values decodes the values of a section, reporting each problem with its
// line; package config implements it, so that every output's keys are
// read and reported as the rest of the file is.
type Values interface {
	Str(n *yaml.Node) string
	Bool(n *yaml.Node) bool
	Int(n *yaml.Node) int
	Size(n *yaml.Node) int64
	Duration(n *yaml.Node) time.Duration
	OneOf(n *yaml.Node, what string, allowed ...string) string
	// StrMap reads a mapping of strings to strings (headers).
	StrMap(n *yaml.Node) map[string]string
	// Mapping calls keys[k] for each key k of the mapping n, as a
	// section's keys are read.
	Mapping(n *yaml.Node, what string, keys map[string]func(*yaml.Node))
	Errorf(line int, format string, args ...any)
}

// FileSettings are the settings of an output that writes a file of the
// host: the config checks it against the inputs (which must not read it
// back), their checkpoint files and the other outputs.
type FileSettings interface {
	// File is the path the output writes, as the config gives it.
	File() string
	// Related are the other files the output writes beside the file at
	// path (its rotated names, its state file).
	Related(path string) []string
}

// Env is what an output gets from the pipeline besides its settings.
type Env struct {
	Alias   string       // the section's alias: names it in logs, metrics and its buffer's directory
	Dir     string       // the config file's directory, against which relative paths are resolved
	DataDir string       // service.data_dir, where filesystem buffers live
	Stdout  io.Writer    // the stdout output's destination
	Logger  *slog.Logger // already tagged with the output's alias
	Check   bool         // run --check: check, create nothing
}

var (
	regMu     sync.RWMutex
	factories = map[string]Factory{}
)

// Register adds an output type; registering a name twice panics.
func Register(f Factory) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := factories[f.Name]; dup {
		panic(fmt.Sprintf("output: %q registered twice", f.Name))
	}
	factories[f.Name] = f
}

// Lookup returns the output type of that name.
func Lookup(name string) (Factory, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	f, ok := factories[name]
	return f, ok
}

// Names returns the registered output types, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	return slices.Sorted(maps.Keys(factories))
}
