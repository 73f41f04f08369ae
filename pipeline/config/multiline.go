package config

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/pipeline/parse"
)

// Multiline is a tail input's multiline section: the rules that join its
// lines into records (a stack trace into one record) and their bounds.
type Multiline struct {
	Line int
	// Parsers names the rules in the order they are tried: built-in ones
	// (parse.BuiltinNames) and service.multiline_parsers'. Rules are the
	// rules they name.
	Parsers []string
	Rules   []*parse.Rule
	// Flush is how long a record that takes no more lines is held before
	// it is emitted (DefaultMultilineFlush).
	Flush time.Duration
	// MaxLines bounds a record's lines (parse.DefaultMaxLines); the
	// input's max_line_size bounds its bytes.
	MaxLines int

	lines []int // of each name in Parsers, for messages
}

// DefaultMultilineFlush is multiline.flush's default, Fluent Bit's
// multiline flush_timeout (the OpenTelemetry Collector's force_flush_period
// is 500ms). A record is emitted early only when no line comes for this
// long; its wait costs nothing but that delay (the checkpoint stays before
// its first line meanwhile), while a wait that is too short splits a trace
// whose lines a busy writer, or files read in turn, deliver in two polls
// apart: two wrong records.
const DefaultMultilineFlush = 4 * time.Second

// multiline reads a tail input's multiline section. The names are
// resolved once the whole file is read: service may come after pipeline.
func (d *decoder) multiline(n *yaml.Node) *Multiline {
	ml := &Multiline{Line: n.Line, Flush: DefaultMultilineFlush, MaxLines: parse.DefaultMaxLines}
	d.mapping(n, "multiline", map[string]func(*yaml.Node){
		"parsers":   func(v *yaml.Node) { ml.Parsers, ml.lines = d.names(v) },
		"flush":     func(v *yaml.Node) { ml.Flush = positive(d, v, "multiline flush", d.duration) },
		"max_lines": func(v *yaml.Node) { ml.MaxLines = positive(d, v, "multiline max_lines", d.intv) },
	})
	if n.Kind == yaml.MappingNode && len(ml.Parsers) == 0 {
		d.errorf(n.Line, "multiline needs parsers: the rules that join lines, built-in (%s) or named in service.multiline_parsers", strings.Join(parse.BuiltinNames(), ", "))
	}
	return ml
}

// names reads a list of names, or one comma-separated string of them,
// with the line of each.
func (d *decoder) names(n *yaml.Node) (names []string, lines []int) {
	if n.Kind != yaml.SequenceNode {
		for _, s := range d.strList(n) {
			names, lines = append(names, s), append(lines, n.Line)
		}
		return names, lines
	}
	for _, e := range n.Content {
		if s := d.str(e); s != "" {
			names, lines = append(names, s), append(lines, e.Line)
		}
	}
	return names, lines
}

// multilineParsers reads service.multiline_parsers: a list of rules, each
// {name, start, continue}.
func (d *decoder) multilineParsers(n *yaml.Node, s *Service) {
	d.sections(n, "multiline_parsers", func(sec *yaml.Node) {
		var name string
		var res [2]*yaml.Node // start, continue
		line := sec.Line
		d.mapping(sec, "multiline parser", map[string]func(*yaml.Node){
			"name":     func(v *yaml.Node) { name, line = d.str(v), v.Line },
			"start":    func(v *yaml.Node) { res[0] = v },
			"continue": func(v *yaml.Node) { res[1] = v },
		})
		// Compiled once the name is known, for the messages.
		var compiled [2]*regexp.Regexp
		bad := false
		for i, v := range res {
			if v == nil {
				continue
			}
			what := [...]string{"start", "continue"}[i]
			src := d.str(v)
			r, err := regexp.Compile(src)
			switch {
			case src == "":
				d.errorf(v.Line, "multiline parser %s: %s is empty (leave it out: a rule needs start, continue or both)", name, what)
			case err != nil:
				d.errorf(v.Line, "multiline parser %s: %s %q: %v", name, what, src, err)
			}
			bad = bad || err != nil || src == ""
			compiled[i] = r
		}
		start, cont := compiled[0], compiled[1]
		if sec.Kind != yaml.MappingNode {
			return
		}
		if name == "" {
			d.errorf(sec.Line, "a multiline parser needs a name, for an input's multiline.parsers to use it")
			return
		}
		if parse.Builtin(name) != nil {
			d.errorf(line, "multiline parser %s: the name of a built-in one (%s); give yours another", name, strings.Join(parse.BuiltinNames(), ", "))
			return
		}
		if first, dup := d.ruleLines[name]; dup {
			d.errorf(line, "multiline parser %s is already defined at line %d", name, first)
			return
		}
		if d.ruleLines == nil {
			d.ruleLines = map[string]int{}
		}
		d.ruleLines[name] = line
		if bad {
			return
		}
		r, err := parse.NewRule(name, start, cont)
		if err != nil {
			d.errorf(sec.Line, "multiline parser %s: %v", name, err)
			return
		}
		s.MultilineParsers = append(s.MultilineParsers, r)
	})
}

// resolveMultiline finds the rule each input's multiline.parsers names,
// and checks that the input's parser takes rules.
func (d *decoder) resolveMultiline(cfg *Config) {
	user := map[string]*parse.Rule{}
	known := parse.BuiltinNames()
	for _, r := range cfg.Service.MultilineParsers {
		user[r.Name] = r
		known = append(known, r.Name)
	}
	for i := range cfg.Inputs {
		ml := cfg.Inputs[i].Multiline
		if ml == nil {
			continue
		}
		if p := cfg.Inputs[i].Parser; slices.Contains(parse.Names, p) {
			if err := parse.CheckMultiline(p); err != nil {
				d.errorf(ml.Line, "%v", err)
			}
		}
		seen := map[string]bool{}
		for k, name := range ml.Parsers {
			r := parse.Builtin(name)
			if r == nil {
				r = user[name]
			}
			switch {
			case seen[name]:
				d.errorf(ml.lines[k], "multiline parser %s is listed twice", name)
			case r == nil && d.ruleLines[name] > 0:
				// Its definition has an error, reported there.
			case r == nil:
				d.errorf(ml.lines[k], "unknown multiline parser %q (known: %s)", name, strings.Join(known, ", "))
			default:
				ml.Rules = append(ml.Rules, r)
			}
			seen[name] = true
		}
	}
}
