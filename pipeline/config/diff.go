package config

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// What a reload must know of a new config: which sections changed, key by
// key. Sections are compared as written, not as decoded: a key changed
// when its value, as YAML, changed (quoting, spacing, comments, the order
// of keys and the section's line do not count), or when it was added or
// removed, even to write a default out. A decoded comparison would need
// every setting comparable and would count a section that moved down a
// line as changed.

// sectionKeys is each key of a section as the decoder reads it (lower
// case) with its value in a canonical form.
type sectionKeys map[string]string

// keysOf returns the keys of a mapping; nil for anything else (which the
// decoder reports).
func keysOf(n *yaml.Node) sectionKeys {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	keys := sectionKeys{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		var b strings.Builder
		canonical(&b, n.Content[i+1])
		keys[strings.ToLower(n.Content[i].Value)] = b.String()
	}
	return keys
}

// canonical writes n as one line of flow YAML, mappings sorted by key and
// aliases replaced by what they stand for.
func canonical(b *strings.Builder, n *yaml.Node) {
	switch n.Kind {
	case yaml.AliasNode:
		canonical(b, n.Alias)
	case yaml.DocumentNode:
		for _, c := range n.Content {
			canonical(b, c)
		}
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteString(", ")
			}
			canonical(b, c)
		}
		b.WriteByte(']')
	case yaml.MappingNode:
		keys := keysOf(n)
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(keys)) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(k) + ": " + keys[k])
		}
		b.WriteByte('}')
	default:
		b.WriteString(n.ShortTag() + " " + strconv.Quote(n.Value))
	}
}

// changed returns the keys whose values differ between a and b, or that
// only one has, sorted.
func (a sectionKeys) changed(b sectionKeys) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Changes is what differs between two configs of one pipeline.
type Changes struct {
	// Service is the keys of service that changed.
	Service []string
	// Inputs and Outputs are the sections that changed, were added or
	// were removed, each named by its alias (given or default), in the
	// new config's order, then the removed ones in the old's.
	Inputs, Outputs []Change
}

// A Change is one input or output that differs.
type Change struct {
	Alias string
	// Keys are the keys whose values differ, sorted (nil when the
	// section was added or removed).
	Keys           []string
	Added, Removed bool
}

// Diff compares the config a pipeline runs (old) with a new one, section
// by section: inputs and outputs by alias, service by key. Filters are not
// compared: a reload replaces them all.
func Diff(old, new *Config) Changes {
	c := Changes{Service: old.Service.keys.changed(new.Service.keys)}
	c.Inputs = diffSections(old.Inputs, new.Inputs, func(in *Input) (string, sectionKeys) { return in.Alias, in.keys })
	c.Outputs = diffSections(old.Outputs, new.Outputs, func(o *Output) (string, sectionKeys) { return o.Alias, o.keys })
	return c
}

func diffSections[T any](old, new []T, id func(*T) (string, sectionKeys)) []Change {
	was := map[string]sectionKeys{}
	for i := range old {
		alias, keys := id(&old[i])
		was[alias] = keys
	}
	var out []Change
	seen := map[string]bool{}
	for i := range new {
		alias, keys := id(&new[i])
		seen[alias] = true
		before, ok := was[alias]
		switch {
		case !ok:
			out = append(out, Change{Alias: alias, Added: true})
		default:
			if ks := before.changed(keys); len(ks) > 0 {
				out = append(out, Change{Alias: alias, Keys: ks})
			}
		}
	}
	for i := range old {
		if alias, _ := id(&old[i]); !seen[alias] {
			out = append(out, Change{Alias: alias, Removed: true})
		}
	}
	return out
}
