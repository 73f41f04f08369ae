package record

import (
	"strconv"
	"strings"
	"time"
)

// ViewError says how an edited OTLP record broke its view: a fixed key
// holding a value of another kind, an id that is not hex of its length, or
// a key the view does not have.
type ViewError struct {
	Path    string // the key, as a policy spells it: .resource.schema_url
	Problem string
}

func (e *ViewError) Error() string { return "record: OTLP view: " + e.Path + " " + e.Problem }

// CheckOTLP reports whether an OTLP record's view, edits included, can be
// encoded as a LogRecord: every key is one of the view's, each holds its
// kind (or null, or is absent: the field's default), and the trace and
// span ids are hex of their length or "". Backends call it after a run
// that edited the record; a non-nil error makes the run a fault. It is nil
// for other records.
//
// The committed state was checked (or decoded) before, so only the keys
// whose values differ from it are looked at: an edit of one attribute
// checks the attributes map's kind, not the resource and scope.
func (r *Record) CheckOTLP() error {
	if r.layout != layoutOTLP {
		return nil
	}
	if r.root.kind() != Map {
		return &ViewError{Path: ".", Problem: "is not a map"}
	}
	return r.a.checkView(r.root, r.base, rootView, nil)
}

// checkView checks the entries of map m against fields, skipping those
// equal to the same key's entry in the checked map base (Absent: none).
// parents are the keys above m, for the error's path.
func (a *Arena) checkView(m, base Value, fields []ViewField, parents []string) error {
	if m == base {
		return nil
	}
	nodes := a.nodes[int(m.off()) : int(m.off())+2*int(m.n())]
	var bnodes []Value
	if base.kind() == Map {
		bnodes = a.nodes[int(base.off()) : int(base.off())+2*int(base.n())]
	}
	for i := 0; i < len(nodes); i += 2 {
		k, v := nodes[i], nodes[i+1]
		if i+1 < len(bnodes) && bnodes[i] == k && bnodes[i+1] == v {
			continue // where a copy of the map left it: the common case
		}
		if b, ok := a.sameEntry(base, i/2, k); ok && b == v {
			continue
		}
		name := a.str(k)
		f := viewField(fields, name)
		if f == nil {
			return viewErr(parents, name, "is not a key of the OTLP view (use .attributes)")
		}
		kind := v.kind()
		switch {
		case f.Kind == Absent || kind == Null:
		case kind != f.Kind:
			return viewErr(parents, name, "holds "+article(kind)+", not "+article(f.Kind))
		case f.Fields != nil:
			var b Value
			if base.kind() == Map {
				b, _ = a.lookup(base, name, k.sig())
			}
			if err := a.checkView(v, b, f.Fields, append(parents, f.Name)); err != nil {
				return err
			}
		case f.Kind == Int:
			if p := f.intProblem(v.Int()); p != "" {
				return viewErr(parents, name, p)
			}
		case f.HexLen > 0:
			if s := a.Str(v); !validHexID(s, f.HexLen) {
				return viewErr(parents, name, "is not \"\" or "+strconv.Itoa(2*f.HexLen)+" hex digits")
			}
		}
	}
	return nil
}

// sameEntry returns the value of key k in base, looking first at entry i,
// where an edit that copied the map left it.
func (a *Arena) sameEntry(base Value, i int, k Value) (Value, bool) {
	if base.kind() != Map {
		return Value{}, false
	}
	if i < int(base.n()) {
		j := int(base.off()) + 2*i
		if bk := a.nodes[j]; bk == k || a.keyEq(bk, k) {
			return a.nodes[j+1], true
		}
	}
	return a.lookup(base, a.str(k), k.sig())
}

func viewErr(parents []string, name, problem string) error {
	path := ""
	for _, p := range parents {
		path += "." + p
	}
	return &ViewError{Path: path + "." + name, Problem: problem}
}

func viewField(fields []ViewField, name string) *ViewField {
	for i := range fields {
		if fields[i].Name == name {
			return &fields[i]
		}
	}
	return nil
}

func validHexID(s string, n int) bool {
	if s == "" {
		return true
	}
	if len(s) != 2*n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func article(k Kind) string {
	s := k.String()
	if strings.IndexByte("aeiou", s[0]) >= 0 {
		return "an " + s
	}
	return "a " + s
}

// appendOTLPJSON writes an OTLP record to a JSON output: its view as one
// object, with "time" (RFC 3339, nanoseconds) first, from the record's time.
func (r *Record) appendOTLPJSON(dst []byte) []byte {
	dst = append(dst, `{"time":"`...)
	dst = time.Unix(0, r.time).UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	a := r.a
	for it := a.Iter(r.root); it.Next(); {
		dst = append(dst, ',')
		dst = a.appendString(dst, it.Key())
		dst = append(dst, ':')
		dst = a.AppendJSON(dst, it.Value())
	}
	return append(dst, '}')
}
