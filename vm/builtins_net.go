package vm

import (
	"regexp"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/netaddr"
	"github.com/policyrun/policyrun/internal/urltext"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// The network built-ins (docs/semantics.md, "Network"): the
// addresses are package netaddr's, the URLs package urltext's, both shared
// with the Lua backend.
func init() {
	builtins[builtin.IPInCIDR] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Bool(netaddr.InCIDR(args[0].S, args[1].S))
		return spec.NoFault
	}
	builtins[builtin.IsIPv4] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Bool(netaddr.IsIPv4(args[0].S))
		return spec.NoFault
	}
	builtins[builtin.IsIPv6] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Bool(netaddr.IsIPv6(args[0].S))
		return spec.NoFault
	}
	builtins[builtin.ParseURL] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		m.parseURL(dst, args[0].S)
		return spec.NoFault
	}
	builtins[builtin.ParseQuery] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		var q urltext.Query
		if !q.Init(args[0].S) {
			*dst = Null()
			return spec.NoFault
		}
		*dst = Reg{K: record.Map, V: m.queryMap(&q, args[0].S)}
		return spec.NoFault
	}
}

// urlKeys are parse_url's keys, in the order of its result type.
var urlKeys = [...]string{"scheme", "user", "host", "port", "path", "query", "fragment"}

func (m *Machine) parseURL(dst *Reg, s string) {
	u, ok := urltext.Parse(s)
	if !ok {
		*dst = Null()
		return
	}
	a := m.a
	b := a.BeginMap(len(urlKeys))
	scheme := a.NewStringFrom(u.Scheme)
	if urltext.LowerScheme(u.Scheme) {
		m.buf = append(m.buf[:0], u.Scheme...)
		for i, c := range m.buf {
			if 'A' <= c && c <= 'Z' {
				m.buf[i] = c + 'a' - 'A'
			}
		}
		scheme = a.NewString(m.buf)
	}
	b.Add(a.NewStringFrom(urlKeys[0]), scheme)
	b.Add(a.NewStringFrom(urlKeys[1]), m.urlPart(u.User, false))
	b.Add(a.NewStringFrom(urlKeys[2]), m.urlPart(u.Host, false))
	port := record.NullValue()
	if u.HasPort {
		port = record.IntValue(int64(u.Port))
	}
	b.Add(a.NewStringFrom(urlKeys[3]), port)
	b.Add(a.NewStringFrom(urlKeys[4]), m.urlPart(u.Path, false))
	var q urltext.Query
	q.Init(u.Query) // Parse checked the escapes
	b.Add(a.NewStringFrom(urlKeys[5]), m.queryMap(&q, u.Query))
	b.Add(a.NewStringFrom(urlKeys[6]), m.urlPart(u.Fragment, false))
	*dst = Reg{K: record.Map, V: b.Finish()}
}

// urlPart is a checked part of a URL, decoded, in the arena.
func (m *Machine) urlPart(s string, plus bool) record.Value {
	if !urltext.NeedsDecode(s, plus) {
		return m.a.NewStringFrom(s)
	}
	m.buf = urltext.Decode(m.buf[:0], s, plus)
	return m.a.NewString(m.buf)
}

// queryMap is the map of q's pairs, decoded; later duplicates win.
func (m *Machine) queryMap(q *urltext.Query, s string) record.Value {
	a := m.a
	b := a.BeginMap(urltext.Count(s))
	for q.Next() {
		k := m.urlPart(q.Key(), true)
		b.Add(k, m.urlPart(q.Value(), true))
	}
	return b.Finish()
}
