package config

import (
	"fmt"
	"math"
	"net"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/internal/suggest"
)

// decoder walks yaml.Nodes by hand rather than decoding into tagged structs:
// that way every problem carries its own line, all problems are reported at
// once, and unknown keys get a did-you-mean.
type decoder struct {
	file string
	errs ErrorList
	// ruleLines is the line of each rule of service.multiline_parsers.
	ruleLines map[string]int
}

func (d *decoder) errorf(line int, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// mapping calls keys[k] for each key k of the mapping n; an unknown or repeated
// key is an error.
func (d *decoder) mapping(n *yaml.Node, what string, keys map[string]func(*yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n.Line, "%s must be a mapping of keys to values, found %s", what, describe(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := strings.ToLower(k.Value)
		if first, dup := seen[name]; dup {
			d.errorf(k.Line, "%s: key %q is given twice (first at line %d)", what, k.Value, first)
			continue
		}
		seen[name] = k.Line
		set, ok := keys[name]
		if !ok {
			d.errorf(k.Line, "%s: unknown key %q%s", what, k.Value, keyHint(name, keys))
			continue
		}
		set(v)
	}
}

func (d *decoder) hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if strings.EqualFold(n.Content[i].Value, key) {
			return true
		}
	}
	return false
}

// sections calls each for every element of a sequence of mappings.
func (d *decoder) sections(n *yaml.Node, what string, each func(*yaml.Node)) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n.Line, "%s must be a list (each item starting with '- name: ...'), found %s", what, describe(n))
		return
	}
	for _, s := range n.Content {
		each(s)
	}
}

// sectionName reads a section's name key and checks it against the known ones.
func (d *decoder) sectionName(n *yaml.Node, what string, known []string) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if strings.EqualFold(n.Content[i].Value, "name") {
			v := n.Content[i+1]
			name := strings.ToLower(d.str(v))
			for _, k := range known {
				if k == name {
					return name
				}
			}
			d.errorf(v.Line, "unknown %s %q (known: %s)", what, v.Value, strings.Join(known, ", "))
			return ""
		}
	}
	d.errorf(n.Line, "this %s has no name (one of: %s)", what, strings.Join(known, ", "))
	return ""
}

func (d *decoder) scalar(n *yaml.Node, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n.Line, "expected %s, found %s", want, describe(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) str(n *yaml.Node) string {
	s, _ := d.scalar(n, "a string")
	return s
}

func (d *decoder) strList(n *yaml.Node) []string {
	if n.Kind == yaml.SequenceNode {
		out := make([]string, 0, len(n.Content))
		for _, e := range n.Content {
			if s := d.str(e); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	// Fluent Bit writes several patterns as one comma-separated string.
	var out []string
	for _, p := range strings.Split(d.str(n), ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// patterns reads glob patterns. filepath.Match has no "**": written
// anyway, it would silently match one directory level only.
func (d *decoder) patterns(n *yaml.Node) []string {
	ps := d.strList(n)
	for _, p := range ps {
		if strings.Contains(p, "**") {
			d.errorf(n.Line, "pattern %q: ** is not supported (a * matches within one directory; list one pattern per depth)", p)
		} else if _, err := filepath.Match(p, ""); err != nil {
			d.errorf(n.Line, "pattern %q: %v", p, err)
		}
	}
	return ps
}

func (d *decoder) boolv(n *yaml.Node) bool {
	s, ok := d.scalar(n, "true or false")
	if !ok {
		return false
	}
	switch strings.ToLower(s) {
	case "true", "on", "yes":
		return true
	case "false", "off", "no":
		return false
	}
	d.errorf(n.Line, "expected true or false, found %q", s)
	return false
}

func (d *decoder) intv(n *yaml.Node) int {
	s, ok := d.scalar(n, "a whole number")
	if !ok {
		return 0
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		d.errorf(n.Line, "expected a whole number, found %q", s)
	}
	return v
}

func (d *decoder) oneOf(n *yaml.Node, what string, allowed ...string) string {
	s := strings.ToLower(d.str(n))
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	d.errorf(n.Line, "unknown %s %q (known: %s)", what, n.Value, strings.Join(allowed, ", "))
	return s
}

// alias reads a section's alias: letters, digits and _ . -, so that it
// reads plainly in logs and needs no escaping as a metric label.
func (d *decoder) alias(n *yaml.Node) string {
	s, ok := d.scalar(n, "an alias such as app_logs")
	if !ok {
		return ""
	}
	bad := s == ""
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			bad = true
		}
	}
	if bad {
		d.errorf(n.Line, "alias %q: use letters, digits and _ . - only", s)
		return ""
	}
	return s
}

// positive reads v with read and refuses 0 or less, naming what; why,
// when given, says what such a value would do.
func positive[T int | int64 | time.Duration](d *decoder, v *yaml.Node, what string, read func(*yaml.Node) T, why ...string) T {
	x := read(v)
	if x <= 0 {
		msg := what + " must be more than 0"
		for _, w := range why {
			msg += " (" + w + ")"
		}
		d.errorf(v.Line, "%s", msg)
	}
	return x
}

// duration reads "200ms", "5s", "1m" or, as Fluent Bit does, a bare number of seconds.
func (d *decoder) duration(n *yaml.Node) time.Duration {
	s, ok := d.scalar(n, "a duration")
	if !ok {
		return 0
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 {
		if f > float64(math.MaxInt64/int64(time.Second)) {
			d.errorf(n.Line, "duration %q is too long", s)
			return 0
		}
		return time.Duration(f * float64(time.Second))
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		d.errorf(n.Line, "expected a duration such as 200ms, 5s or 1m, found %q", s)
		return 0
	}
	return v
}

// loopback reads the metrics address: host:port on a loopback address,
// since the endpoint has no authentication.
func (d *decoder) loopback(n *yaml.Node) string {
	s, ok := d.scalar(n, "an address such as 127.0.0.1:2021")
	if !ok {
		return ""
	}
	if _, _, err := SplitMetricsAddr(s); err != nil {
		d.errorf(n.Line, "%v", err)
	}
	return s
}

// SplitMetricsAddr checks a metrics address and splits it. The host must
// be an IP address or localhost: a loopback address, or another one
// written out (0.0.0.0, 10.0.0.5), which is the user's choice; not empty
// (":2021" would listen everywhere without saying so) nor another name,
// which could resolve to anything. The port is a number up to 65535 (0
// picks a free one). localhost is resolved when the endpoint starts, and
// only a loopback address it resolves to is used.
func SplitMetricsAddr(s string) (host string, port int, err error) {
	host, ps, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, fmt.Errorf("expected an address such as 127.0.0.1:2021, found %q", s)
	}
	port, _ = strconv.Atoi(ps)
	if !validPort(ps) {
		return "", 0, fmt.Errorf("metrics address %q: the port must be a number from 0 to 65535", s)
	}
	if host != "localhost" && net.ParseIP(host) == nil {
		return "", 0, fmt.Errorf("metrics must listen on a loopback address (127.0.0.1, [::1], localhost) or an IP address written out (0.0.0.0), not %q: the endpoint has no authentication", s)
	}
	return host, port, nil
}

// size reads a byte count: 1000, 32k, 5M, 1G (see ParseSize).
func (d *decoder) size(n *yaml.Node) int64 {
	s, ok := d.scalar(n, "a size")
	if !ok {
		return 0
	}
	v, ok := ParseSize(s)
	if !ok {
		d.errorf(n.Line, "expected a size such as 1000, 32k or 5M, found %q", s)
		return 0
	}
	return v
}

// ParseSize reads a byte count as a pipeline config writes it: 1000, 32k,
// 5M, 1G (K, M and G are powers of 1024, as Fluent Bit's; B or iB may
// follow, and case and surrounding space do not matter). It reports false
// for anything else, a negative size, or one past 2^62.
func ParseSize(s string) (int64, bool) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, false
	}
	return v * mult, true
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Value == "" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// keyHint returns ` (did you mean "x"?)` for the closest known key, or the list
// of known keys when nothing is close.
func keyHint(name string, keys map[string]func(*yaml.Node)) string {
	known := make([]string, 0, len(keys))
	for k := range keys {
		if k != "name" {
			known = append(known, k)
		}
	}
	sort.Strings(known)
	if best := suggest.Closest(name, known); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	if len(known) == 0 {
		return ""
	}
	return " (known: " + strings.Join(known, ", ") + ")"
}

// values gives the output types (output.Settings) the decoder's readers,
// so that their keys are read and reported as every other key is.
type values struct{ d *decoder }

func (v values) Str(n *yaml.Node) string                  { return v.d.str(n) }
func (v values) Bool(n *yaml.Node) bool                   { return v.d.boolv(n) }
func (v values) Int(n *yaml.Node) int                     { return v.d.intv(n) }
func (v values) Size(n *yaml.Node) int64                  { return v.d.size(n) }
func (v values) Duration(n *yaml.Node) time.Duration      { return v.d.duration(n) }
func (v values) Errorf(line int, format string, a ...any) { v.d.errorf(line, format, a...) }

func (v values) OneOf(n *yaml.Node, what string, allowed ...string) string {
	return v.d.oneOf(n, what, allowed...)
}

func (v values) Mapping(n *yaml.Node, what string, keys map[string]func(*yaml.Node)) {
	v.d.mapping(n, what, keys)
}

// StrMap reads a mapping of names to strings, such as HTTP headers.
func (v values) StrMap(n *yaml.Node) map[string]string {
	if n.Kind != yaml.MappingNode {
		v.d.errorf(n.Line, "expected a mapping of names to values, found %s", describe(n))
		return nil
	}
	m := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if _, dup := m[k.Value]; dup {
			v.d.errorf(k.Line, "key %q is given twice", k.Value)
			continue
		}
		m[k.Value] = v.d.str(val)
	}
	return m
}
