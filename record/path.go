package record

import (
	"errors"
	"strconv"
	"strings"
	"unsafe"
)

// Step is one step of a Path: a map key or an array index.
type Step struct {
	key     string
	index   int
	isIndex bool
	sig     uint8 // keySig of key
	// plain is set when key needs no escapes in JSON (see flagPlain), so
	// that a key an edit adds is written without a scan. Steps made at
	// run time (KeyStepBytes) do not look.
	plain bool
	// memo, when set (Path.WithHints), is the step's memory of its last
	// uses, for one goroutine.
	memo *stepMemo
}

// stepMemo is what a key step remembers of its last uses: where in its
// map the key was found (the records of one source mostly share their key
// order, so a lookup tries there first), and the key as a string of the
// arena an edit last added it to, until that arena's Reset (so that the
// edits of a batch's records add one copy of the key, not one each).
type stepMemo struct {
	pos uint32
	// w0 and w1 are the key's first and last 8 bytes (little-endian), for
	// a key of at most 16; for a key shorter than 8, w0 is all of it and
	// mask keeps as many bytes of a word.
	w0, w1, mask uint64
	key          Value
	a            *Arena
	gen          uint64
}

func newStepMemo(key string) stepMemo {
	var mo stepMemo
	b := []byte(key)
	switch n := len(b); {
	case n < 8:
		var w, m [8]byte
		copy(w[:], b)
		for i := range n {
			m[i] = 0xff
		}
		mo.w0, mo.mask = word(unsafe.Pointer(&w[0])), word(unsafe.Pointer(&m[0]))
	case n <= 16:
		mo.w0, mo.w1 = word(unsafe.Pointer(&b[0])), word(unsafe.Pointer(&b[n-8]))
	}
	return mo
}

// keyIn returns the copy of the step's key that an edit last added to a,
// while a was not Reset since; false when there is none (or no memo).
func (mo *stepMemo) keyIn(a *Arena) (Value, bool) {
	if mo == nil || mo.a != a || mo.gen != a.gen {
		return Value{}, false
	}
	return mo.key, true
}

// word loads the 8 bytes at p in the machine's byte order, which is the
// order of the memo's words too: a hint compares the two as loaded.
func word(p unsafe.Pointer) uint64 { return *(*uint64)(p) }

// KeyStep returns a step that looks key up in a map.
func KeyStep(key string) Step {
	return Step{key: key, sig: keySig(key), plain: plainJSON(unsafe.Slice(unsafe.StringData(key), len(key)))}
}

// KeyStepBytes returns a key step that refers to b without copying, for keys
// computed at run time (b may be arena bytes). b must not change while the
// step is in use.
func KeyStepBytes(b []byte) Step {
	if len(b) == 0 {
		return KeyStep("")
	}
	return Step{key: unsafe.String(&b[0], len(b)), sig: keySig(b)}
}

// IndexStep returns a step that takes element i of an array; a negative i
// counts from the end (-1 is the last element).
func IndexStep(i int) Step { return Step{index: i, isIndex: true} }

// IsIndex reports whether s is an array index step.
func (s Step) IsIndex() bool { return s.isIndex }

// Key returns the key of a key step.
func (s Step) Key() string { return s.key }

// Index returns the index of an index step.
func (s Step) Index() int { return s.index }

// Path is a sequence of steps from the root of a record. The empty path is
// the root. A Path is built once (at compile time) and read by any number of
// goroutines; a caller that computes keys at run time can build one in a
// reused buffer: p = append(p[:0], KeyStep("a"), KeyStepBytes(k)).
//
// Each key step carries a precomputed signature of its key (a 7-bit hash of
// its length, first and last byte), as the keys of decoded maps do: a
// lookup scans the map comparing lengths and signatures, and bytes only on
// a match. For the short maps of log records a scan is faster than a hash
// table.
type Path []Step

// NewPath returns the path of the given map keys.
func NewPath(keys ...string) Path {
	p := make(Path, len(keys))
	for i, k := range keys {
		p[i] = KeyStep(k)
	}
	return p
}

// Equal reports whether p and q have the same steps: the same place in any
// record, spelled the same way (an index counted from the end is not the
// same step as the one it may reach).
func (p Path) Equal(q Path) bool {
	if len(p) != len(q) {
		return false
	}
	for i := range p {
		// Not p[i] != q[i]: sig and plain are derived, and plain is not
		// known for every step.
		if p[i].key != q[i].key || p[i].index != q[i].index || p[i].isIndex != q[i].isIndex {
			return false
		}
	}
	return true
}

// WithHints returns a copy of p whose key steps remember where in its map
// each was last found and look there first, a check of one key instead of
// a scan of the map when records share their key order, as the records of
// one source mostly do; and the copy of the key that an edit last added to
// an arena, which the next edits until its Reset add again. The copy is
// for one goroutine: its lookups and edits write the memos.
func (p Path) WithHints() Path {
	q := append(Path(nil), p...)
	memos := make([]stepMemo, len(q))
	for i := range q {
		if !q[i].isIndex {
			memos[i] = newStepMemo(q[i].key)
			q[i].memo = &memos[i]
		}
	}
	return q
}

var errBadPath = errors.New("record: bad path")

// ParsePath parses the policy language's path syntax: ".", ".a.b",
// `."key with spaces"`, ".a[0]", `.a["k"]`.
func ParsePath(s string) (Path, error) {
	if s == "." {
		return Path{}, nil
	}
	var p Path
	for len(s) > 0 {
		switch s[0] {
		case '.':
			s = s[1:]
			if len(s) > 0 && s[0] == '"' {
				k, rest, err := unquotePrefix(s)
				if err != nil {
					return nil, err
				}
				p, s = append(p, KeyStep(k)), rest
				continue
			}
			i := 0
			for i < len(s) && (s[i] == '_' || s[i] == '-' || s[i] == '@' || s[i] >= '0' && s[i] <= '9' ||
				s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= 0x80) {
				i++
			}
			if i == 0 {
				return nil, errBadPath
			}
			p, s = append(p, KeyStep(s[:i])), s[i:]
		case '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, errBadPath
			}
			in := s[1:end]
			if len(in) > 0 && in[0] == '"' {
				k, rest, err := unquotePrefix(in)
				if err != nil || rest != "" {
					return nil, errBadPath
				}
				p = append(p, KeyStep(k))
			} else {
				i, err := strconv.Atoi(in)
				if err != nil {
					return nil, errBadPath
				}
				p = append(p, IndexStep(i))
			}
			s = s[end+1:]
		default:
			return nil, errBadPath
		}
	}
	if p == nil {
		return nil, errBadPath
	}
	return p, nil
}

func unquotePrefix(s string) (string, string, error) {
	prefix, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", errBadPath
	}
	k, err := strconv.Unquote(prefix)
	if err != nil {
		return "", "", errBadPath
	}
	return k, s[len(prefix):], nil
}

// MustParsePath is ParsePath that panics on error, for tests and constants.
func MustParsePath(s string) Path {
	p, err := ParsePath(s)
	if err != nil {
		panic(err.Error() + ": " + s)
	}
	return p
}

func isIdent(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// String formats p in the policy language's path syntax.
func (p Path) String() string {
	if len(p) == 0 {
		return "."
	}
	var b strings.Builder
	for _, s := range p {
		switch {
		case s.isIndex:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case isIdent(s.key):
			b.WriteString("." + s.key)
		default:
			b.WriteString("." + strconv.Quote(s.key))
		}
	}
	return b.String()
}
