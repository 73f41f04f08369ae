package record

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
)

// An ordered model of JSON values for the edit tests: maps keep their key
// order and arrays their elements, as records do, so that a test can hold
// a record's output, key order included, against what the edits should
// have made of it.

type (
	omap struct {
		keys []string
		vals []any
	}
	oarr struct{ elems []any }
	// scalar is a scalar's canonical JSON text.
	scalar string
)

const onull = scalar("null")

func (m *omap) find(k string) int {
	for i, x := range m.keys {
		if x == k {
			return i
		}
	}
	return -1
}

func (m *omap) put(k string, v any) {
	if i := m.find(k); i >= 0 {
		m.vals[i] = v
		return
	}
	m.keys, m.vals = append(m.keys, k), append(m.vals, v)
}

func (m *omap) del(i int) {
	m.keys = append(m.keys[:i], m.keys[i+1:]...)
	m.vals = append(m.vals[:i], m.vals[i+1:]...)
}

func oclone(x any) any {
	switch x := x.(type) {
	case *omap:
		c := &omap{keys: append([]string(nil), x.keys...), vals: make([]any, len(x.vals))}
		for i, v := range x.vals {
			c.vals[i] = oclone(v)
		}
		return c
	case *oarr:
		c := &oarr{elems: make([]any, len(x.elems))}
		for i, v := range x.elems {
			c.elems[i] = oclone(v)
		}
		return c
	}
	return x
}

// ocanon writes x in one canonical spelling.
func ocanon(x any) string {
	var b strings.Builder
	var w func(any)
	w = func(x any) {
		switch x := x.(type) {
		case *omap:
			b.WriteByte('{')
			for i, k := range x.keys {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.Quote(k) + ":")
				w(x.vals[i])
			}
			b.WriteByte('}')
		case *oarr:
			b.WriteByte('[')
			for i, v := range x.elems {
				if i > 0 {
					b.WriteByte(',')
				}
				w(v)
			}
			b.WriteByte(']')
		case scalar:
			b.WriteString(string(x))
		default:
			fmt.Fprintf(&b, "?%T", x)
		}
	}
	w(x)
	return b.String()
}

var errDupKey = errors.New("duplicate key")

// oparse reads one JSON value in order. With strict, a duplicate key is an
// error; otherwise the last value wins at the first key's place (as the
// decoder does).
func oparse(b []byte, strict bool) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var val func() (any, error)
	val = func() (any, error) {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		switch t := t.(type) {
		case json.Delim:
			if t == '[' {
				a := &oarr{elems: []any{}}
				for d.More() {
					v, err := val()
					if err != nil {
						return nil, err
					}
					a.elems = append(a.elems, v)
				}
				_, err := d.Token()
				return a, err
			}
			m := &omap{}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := val()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				if strict && m.find(k) >= 0 {
					return nil, fmt.Errorf("%w %q", errDupKey, k)
				}
				m.put(k, v)
			}
			_, err := d.Token()
			return m, err
		case json.Number:
			return scalar(t.String()), nil
		case string:
			return scalar(strconv.Quote(t)), nil
		case bool:
			return scalar(strconv.FormatBool(t)), nil
		case nil:
			return onull, nil
		}
		return nil, fmt.Errorf("token %v", t)
	}
	v, err := val()
	if err == nil {
		if _, e := d.Token(); e != io.EOF {
			err = fmt.Errorf("trailing data")
		}
	}
	return v, err
}

func mustOparse(t testing.TB, s string) any {
	t.Helper()
	v, err := oparse([]byte(s), false)
	if err != nil {
		t.Fatalf("oparse(%s): %v", s, err)
	}
	return v
}

// omsgpack encodes x as msgpack, in order.
func omsgpack(x any) []byte {
	var b []byte
	var w func(any)
	w = func(x any) {
		switch x := x.(type) {
		case *omap:
			b = append(b, 0xde)
			b = binary.BigEndian.AppendUint16(b, uint16(len(x.keys)))
			for i, k := range x.keys {
				b = append(b, 0xd9, byte(len(k)))
				b = append(b, k...)
				w(x.vals[i])
			}
		case *oarr:
			b = append(b, 0xdc)
			b = binary.BigEndian.AppendUint16(b, uint16(len(x.elems)))
			for _, v := range x.elems {
				w(v)
			}
		case scalar:
			s := string(x)
			switch {
			case s == "null":
				b = append(b, 0xc0)
			case s == "true":
				b = append(b, 0xc3)
			case s == "false":
				b = append(b, 0xc2)
			case s[0] == '"':
				u, err := strconv.Unquote(s)
				if err != nil {
					panic(fmt.Sprintf("omsgpack: %s: %v", s, err))
				}
				b = append(b, 0xd9, byte(len(u)))
				b = append(b, u...)
			default:
				if i, err := strconv.ParseInt(s, 10, 64); err == nil {
					b = append(b, 0xd3)
					b = binary.BigEndian.AppendUint64(b, uint64(i))
				} else {
					f, err := strconv.ParseFloat(s, 64)
					if err != nil {
						panic(fmt.Sprintf("omsgpack: %s: %v", s, err))
					}
					b = append(b, 0xcb)
					b = binary.BigEndian.AppendUint64(b, uint64FromFloat(f))
				}
			}
		}
	}
	w(x)
	return b
}

func uint64FromFloat(f float64) uint64 { return FloatValue(f).u }

// omodel is the model of one record.
type omodel struct{ root *omap }

// oget returns the value at p.
func (m *omodel) oget(p Path) (any, bool) {
	var cur any = m.root
	for _, s := range p {
		switch c := cur.(type) {
		case *oarr:
			if !s.isIndex {
				return nil, false
			}
			j, ok := normIndex(s.index, len(c.elems))
			if !ok {
				return nil, false
			}
			cur = c.elems[j]
		case *omap:
			if s.isIndex {
				return nil, false
			}
			j := c.find(s.key)
			if j < 0 {
				return nil, false
			}
			cur = c.vals[j]
		default:
			return nil, false
		}
	}
	return cur, true
}

// ocheckSet reports whether a set of p can succeed, with the errors of
// the documented rules.
func (m *omodel) ocheckSet(p Path) error {
	var cur any = m.root
	i := 0
	for ; i < len(p); i++ {
		if cur == nil || cur == onull {
			break
		}
		s := p[i]
		if s.isIndex {
			c, ok := cur.(*oarr)
			if !ok {
				return ErrNotContainer
			}
			j, ok := normIndex(s.index, len(c.elems))
			if !ok {
				return ErrIndexRange
			}
			cur = c.elems[j]
			continue
		}
		c, ok := cur.(*omap)
		if !ok {
			return ErrNotContainer
		}
		j := c.find(s.key)
		if j < 0 {
			i++
			break
		}
		cur = c.vals[j]
	}
	for ; i < len(p); i++ {
		if p[i].isIndex {
			return ErrIndexRange
		}
	}
	return nil
}

func (m *omodel) oset(p Path, v any) error {
	if len(p) == 0 {
		root, ok := v.(*omap)
		if !ok {
			return ErrRootType
		}
		m.root = oclone(root).(*omap)
		return nil
	}
	if err := m.ocheckSet(p); err != nil {
		return err
	}
	v = oclone(v)
	var cur any = m.root
	for i, s := range p {
		last := i == len(p)-1
		switch c := cur.(type) {
		case *oarr:
			j, _ := normIndex(s.index, len(c.elems))
			if last {
				c.elems[j] = v
				return nil
			}
			if c.elems[j] == onull {
				c.elems[j] = &omap{}
			}
			cur = c.elems[j]
		case *omap:
			if last {
				c.put(s.key, v)
				return nil
			}
			j := c.find(s.key)
			if j < 0 {
				c.put(s.key, &omap{})
				j = len(c.keys) - 1
			} else if c.vals[j] == onull {
				c.vals[j] = &omap{}
			}
			cur = c.vals[j]
		}
	}
	return nil
}

func (m *omodel) otake(p Path) (any, bool) {
	if len(p) == 0 {
		old := m.root
		m.root = &omap{}
		return old, true
	}
	v, ok := m.oget(p)
	if !ok {
		return nil, false
	}
	parent, _ := m.oget(p[:len(p)-1])
	s := p[len(p)-1]
	switch c := parent.(type) {
	case *oarr:
		j, _ := normIndex(s.index, len(c.elems))
		c.elems = append(c.elems[:j], c.elems[j+1:]...)
	case *omap:
		c.del(c.find(s.key))
	}
	return v, true
}

// orename is the VM's rename: take from, then set it at to (at the end of
// its map); a set that fails leaves from taken.
func (m *omodel) orename(from, to Path) error {
	if len(from) == 0 || len(to) == 0 || from[len(from)-1].isIndex || to[len(to)-1].isIndex {
		return ErrNotContainer
	}
	if from.Equal(to) {
		return nil
	}
	v, ok := m.otake(from)
	if !ok {
		return nil
	}
	return m.oset(to, v)
}

func (m *omodel) olift(p Path, prefix string) error {
	if len(p) == 0 {
		return ErrNotLiftable
	}
	v, ok := m.oget(p)
	if !ok || v == onull {
		return nil
	}
	lm, isMap := v.(*omap)
	if !isMap || p[len(p)-1].isIndex {
		return ErrNotLiftable
	}
	m.otake(p)
	parent, _ := m.oget(p[:len(p)-1])
	pm := parent.(*omap)
	for i, k := range lm.keys {
		pm.put(prefix+k, lm.vals[i])
	}
	return nil
}

// opaths lists the paths of x up to depth steps, array elements both from
// the start and from the end.
func opaths(x any, prefix Path, depth int, out []Path) []Path {
	out = append(out, append(Path(nil), prefix...))
	if depth == 0 {
		return out
	}
	switch c := x.(type) {
	case *omap:
		for i, k := range c.keys {
			out = opaths(c.vals[i], append(prefix, KeyStep(k)), depth-1, out)
		}
	case *oarr:
		for i, v := range c.elems {
			out = opaths(v, append(prefix, IndexStep(i)), depth-1, out)
			out = append(out, append(append(Path(nil), prefix...), IndexStep(i-len(c.elems))))
		}
	}
	return out
}

// valueCanon is the canonical JSON of v, a value of a.
func valueCanon(t testing.TB, a *Arena, v Value) string {
	t.Helper()
	b := a.AppendJSON(nil, v)
	x, err := oparse(b, true)
	if err != nil {
		t.Fatalf("value %s: %v", b, err)
	}
	return ocanon(x)
}
