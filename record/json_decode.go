package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// DecodeJSON decodes one JSON line (an object, surrounded by optional
// whitespace, a trailing newline included) into a new record of the arena.
// With Referenced, strings point into line, which must stay unchanged until
// the arena's next Reset. On error the arena is as it was before the call.
//
// The record remembers the line: while its map is the map as decoded,
// Record.AppendJSON writes the line itself (see passThrough).
func (a *Arena) DecodeJSON(line []byte, mode Mode) (*Record, error) {
	var keys keyFilter
	nodes0 := len(a.nodes)
	root, text, err := a.decodeJSON(line, mode, &keys)
	if err != nil {
		return nil, err
	}
	r := a.newRecord()
	r.base, r.root = root, root
	r.decoded, r.src = root, text
	if text.kind() != String && !keys.ok {
		return r, nil
	}
	t := r.newText()
	if text.kind() == String {
		t.decLo, t.decHi = uint32(nodes0), uint32(len(a.nodes))
		r.startJournal(t)
	}
	if keys.ok {
		t.keys, t.keysAt = keys.sigs, root.off()+1
	}
	return r, nil
}

// DecodeJSONValue decodes any JSON value from b (strings are copied into the
// slab) and returns it, for parse_json-style functions. On error the arena
// is as it was before the call.
func (a *Arena) DecodeJSONValue(b []byte) (Value, error) {
	v, _, err := a.decodeJSON(b, Owned, nil)
	return v, err
}

// decodeJSON decodes the JSON value in b. It also returns the value's text
// (b without the surrounding whitespace, as a String of the arena) when
// the text may stand for the value in JSON output: nothing was normalised
// (see jsonDecoder.norm) and it holds no line break. Otherwise text is Absent.
// With keys, b must hold a map, and keys gets the signatures of its keys
// when they are all known.
func (a *Arena) decodeJSON(b []byte, mode Mode, keys *keyFilter) (v, text Value, err error) {
	wantMap := keys != nil
	if max := a.Limits.maxInput(); len(b) > max || len(b) > math.MaxUint32 {
		return Value{}, Value{}, decodeErr(max, ErrTooLarge, "")
	}
	m := a.mark()
	d := jsonDecoder{a: a, b: b, maxDepth: a.Limits.maxDepth(), bigFloat: !a.Limits.RejectBigInts, keys: keys}
	if mode == Referenced {
		d.ref = a.addBuf(b)
	} else {
		// Owned: copy the line into the slab once and refer to the copy,
		// cheaper than copying its strings one by one.
		if len(a.slab)+len(b) > math.MaxUint32 {
			return Value{}, Value{}, decodeErr(0, ErrTooLarge, "arena full")
		}
		d.base = uint32(len(a.slab))
		a.slab = append(a.slab, b...)
		d.b = a.slab[d.base:len(a.slab):len(a.slab)]
	}
	i := skipSpace(b, 0)
	if wantMap && (i >= len(b) || b[i] != '{') {
		a.rollback(m)
		if i >= len(b) {
			return Value{}, Value{}, decodeErr(i, ErrTruncated, "empty line")
		}
		if !startsJSONValue(b[i]) {
			// Plain text, most likely: say so rather than call it a
			// JSON value of the wrong kind.
			return Value{}, Value{}, decodeErr(i, ErrSyntax, "not JSON (a JSON line must be an object)")
		}
		return Value{}, Value{}, decodeErr(i, ErrNotMap, "a JSON line must be an object")
	}
	start := i
	v, i, err = d.value(i, 0)
	end := i
	if err == nil {
		if i = skipSpace(b, i); i != len(b) {
			err = decodeErr(i, ErrTrailing, "")
		}
	}
	if err != nil {
		a.rollback(m)
		return Value{}, Value{}, err
	}
	// Strings cannot hold a raw line break, so any is between tokens.
	if t := b[start:end]; !d.norm && bytes.IndexByte(t, '\n') < 0 && bytes.IndexByte(t, '\r') < 0 {
		text = d.view(start, end)
	}
	return v, text, nil
}

type jsonDecoder struct {
	a        *Arena
	b        []byte
	ref      uint32 // where strings point: input buffer ref-1, or 0 the slab
	base     uint32 // offset of b in the slab when ref is 0
	maxDepth int
	bigFloat bool
	// norm is set when the value decoded differs from what its text
	// means to other JSON readers: a duplicate key was dropped, an integer
	// outside int64 became a float, or a lone surrogate became U+FFFD.
	norm bool
	// keys, when not nil, gets the key signatures of the root map.
	keys *keyFilter
}

// startsJSONValue reports whether c may begin a JSON value.
func startsJSONValue(c byte) bool {
	switch c {
	case '{', '[', '"', '-', 't', 'f', 'n':
		return true
	}
	return c >= '0' && c <= '9'
}

// digitsEnd returns the end of the run of decimal digits at i.
func digitsEnd(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\n', '\t', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func (d *jsonDecoder) value(i, depth int) (Value, int, error) {
	b := d.b
	i = skipSpace(b, i)
	if i >= len(b) {
		return Value{}, i, decodeErr(i, ErrTruncated, "expected a value")
	}
	switch c := b[i]; c {
	case '"':
		return d.str(i)
	case '{':
		return d.object(i, depth+1)
	case '[':
		return d.array(i, depth+1)
	case 't':
		return d.literal(i, "true", BoolValue(true))
	case 'f':
		return d.literal(i, "false", BoolValue(false))
	case 'n':
		return d.literal(i, "null", NullValue())
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return d.number(i)
		}
		return Value{}, i, decodeErr(i, ErrSyntax, "unexpected "+strconv.QuoteRune(rune(c)))
	}
}

func (d *jsonDecoder) literal(i int, lit string, v Value) (Value, int, error) {
	if len(d.b)-i >= len(lit) && string(d.b[i:i+len(lit)]) == lit {
		return v, i + len(lit), nil
	}
	if len(d.b)-i < len(lit) && string(d.b[i:]) == lit[:len(d.b)-i] {
		return Value{}, len(d.b), decodeErr(len(d.b), ErrTruncated, "in "+lit)
	}
	return Value{}, i, decodeErr(i, ErrSyntax, "invalid literal")
}

func (d *jsonDecoder) object(i, depth int) (Value, int, error) {
	if depth > d.maxDepth {
		return Value{}, i, depthErr(i, d.maxDepth)
	}
	a, b := d.a, d.b
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		if depth == 1 && d.keys != nil {
			*d.keys = keyFilter{ok: true}
		}
		return containerValue(Map, uint32(len(a.nodes)), 0), i + 1, nil
	}
	base := len(a.scratch)
	var seen sigSet // signatures of the keys so far, see dedup
	mayDup := false
	for {
		if i >= len(b) {
			return Value{}, i, decodeErr(i, ErrTruncated, "in an object")
		}
		if b[i] != '"' {
			return Value{}, i, decodeErr(i, ErrSyntax, "expected a string key")
		}
		var k Value
		var j int
		if e := strSpecial(b, i+1); e < len(b) && b[e] == '"' {
			// Built whole, not patched with its signature afterwards: a
			// byte store into a 16-byte value stalls the copy that follows.
			k = Value{h: uint32(String) | flagPlain | flagQuoted | uint32(keySig(b[i+1:e]))<<16, ref: d.ref,
				u: uint64(d.base+uint32(i+1))<<32 | uint64(e-i-1)}
			j = e + 1
			// Look for an earlier equal key only when one may exist: see dedup.
			if !mayDup && seen.add(k.sig()) {
				kv := a.scratch[base:]
				mayDup = len(kv) >= 64 || a.hasKey(kv, k)
			}
		} else {
			var err error
			if k, j, err = d.strRest(i, e); err != nil {
				return Value{}, j, err
			}
			if raw := b[i+1 : j-1]; int(k.n()) != len(raw) {
				mayDup = true // the key had escapes
			} else {
				k.setSig(keySig(raw))
				if !mayDup && seen.add(k.sig()) {
					kv := a.scratch[base:]
					mayDup = len(kv) >= 64 || a.hasKey(kv, k)
				}
			}
		}
		// Compact JSON ("k":v,"k2":...) takes the first branch of each
		// test below; whitespace takes the second.
		if j < len(b) && b[j] == ':' {
			j++
		} else {
			j = skipSpace(b, j)
			if j >= len(b) {
				return Value{}, j, decodeErr(j, ErrTruncated, "in an object")
			}
			if b[j] != ':' {
				return Value{}, j, decodeErr(j, ErrSyntax, "expected ':'")
			}
			j++
		}
		var v Value
		var err error
		j = skipSpace(b, j)
		if j >= len(b) {
			_, j, err = d.value(j, depth)
			return Value{}, j, err
		}
		switch c := b[j]; {
		case c == '"': // the common cases, inline
			if e := strSpecial(b, j+1); e < len(b) && b[e] == '"' {
				v, j = d.plainView(j+1, e), e+1
			} else if v, j, err = d.strRest(j, e); err != nil {
				return Value{}, j, err
			}
		case c >= '0' && c <= '9' || c == '-':
			if v, j, err = d.number(j); err != nil {
				return Value{}, j, err
			}
		default:
			if v, j, err = d.value(j, depth); err != nil {
				return Value{}, j, err
			}
		}
		a.scratch = append(a.scratch, k, v)
		if j+1 < len(b) && b[j] == ',' && b[j+1] == '"' {
			i = j + 1
			continue
		}
		i = skipSpace(b, j)
		if i >= len(b) {
			return Value{}, i, decodeErr(i, ErrTruncated, "in an object")
		}
		if b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if b[i] != '}' {
			return Value{}, i, decodeErr(i, ErrSyntax, "expected ',' or '}'")
		}
		break
	}
	if depth == 1 && d.keys != nil && !mayDup {
		*d.keys = keyFilter{sigs: seen, ok: true} // seen has every key
	}
	kv := a.scratch[base:]
	n := len(kv) / 2
	if mayDup {
		n = a.dedup(kv)
		d.norm = d.norm || n != len(kv)/2
	}
	first := len(a.nodes)
	a.nodes = append(a.nodes, kv[:2*n]...)
	a.scratch = a.scratch[:base]
	return containerValue(Map, uint32(first), uint32(n)), i + 1, nil
}

func (d *jsonDecoder) array(i, depth int) (Value, int, error) {
	if depth > d.maxDepth {
		return Value{}, i, depthErr(i, d.maxDepth)
	}
	a, b := d.a, d.b
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return containerValue(Array, uint32(len(a.nodes)), 0), i + 1, nil
	}
	base := len(a.scratch)
	for {
		v, j, err := d.value(i, depth)
		if err != nil {
			return Value{}, j, err
		}
		a.scratch = append(a.scratch, v)
		i = skipSpace(b, j)
		if i >= len(b) {
			return Value{}, i, decodeErr(i, ErrTruncated, "in an array")
		}
		if b[i] == ',' {
			i++
			continue
		}
		if b[i] != ']' {
			return Value{}, i, decodeErr(i, ErrSyntax, "expected ',' or ']'")
		}
		break
	}
	first := len(a.nodes)
	a.nodes = append(a.nodes, a.scratch[base:]...)
	n := len(a.scratch) - base
	a.scratch = a.scratch[:base]
	return containerValue(Array, uint32(first), uint32(n)), i + 1, nil
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special8 returns, for 8 bytes, a mask whose lowest set bit marks the
// first byte that is '"', '\\', a control character or non-ASCII (bits
// above it may be false alarms), or 0 when there is none.
func special8(w uint64) uint64 {
	q := w ^ (lsb * '"')
	s := w ^ (lsb * '\\')
	return ((q-lsb)&^q | (s-lsb)&^s | (w-lsb*0x20)&^w | w) & msb
}

// view returns the string b[start:end] as a value that points into the
// input or its copy in the slab.
func (d *jsonDecoder) view(start, end int) Value {
	return strValue(String, d.ref, d.base+uint32(start), uint32(end-start))
}

// plainView is view for a string that needs no escapes in JSON.
func (d *jsonDecoder) plainView(start, end int) Value {
	return Value{h: uint32(String) | flagPlain | flagQuoted, ref: d.ref, u: uint64(d.base+uint32(start))<<32 | uint64(end-start)}
}

// strSpecial returns the index of the first byte of b at or after p that
// is '"', '\\', a control character or non-ASCII, or len(b): a word at a
// time, then by table.
//
// It returns from inside the word loop, not through special8From, so that
// the common case, a closing quote found a word at a time, takes no second
// test: this is the first scan of every string the decoder reads.
func strSpecial(b []byte, p int) int {
	for ; p+8 <= len(b); p += 8 {
		if m := special8(binary.LittleEndian.Uint64(b[p:])); m != 0 {
			return p + bits.TrailingZeros64(m)>>3
		}
	}
	for p < len(b) && safeASCII[b[p]] {
		p++
	}
	return p
}

// special8From is strSpecial's word-at-a-time scan: the index of the
// first special byte of b at or after p, or where fewer than 8 bytes are
// left. It inlines, so the scanners that go on byte by byte in their own
// way (strRest, appendQuoted) share it at no cost.
func special8From(b []byte, p int) int {
	for ; p+8 <= len(b); p += 8 {
		if m := special8(binary.LittleEndian.Uint64(b[p:])); m != 0 {
			return p + bits.TrailingZeros64(m)>>3
		}
	}
	return p
}

// str decodes the string whose opening quote is at i.
func (d *jsonDecoder) str(i int) (Value, int, error) {
	e := strSpecial(d.b, i+1)
	if e < len(d.b) && d.b[e] == '"' {
		return d.plainView(i+1, e), e + 1, nil
	}
	return d.strRest(i, e)
}

// strRest decodes the string whose opening quote is at i, where q is the
// first byte after the quote that strSpecial stops at, not the closing quote.
func (d *jsonDecoder) strRest(i, q int) (Value, int, error) {
	b := d.b
	start := i + 1
	i = q
	esc, plain := false, true
	for {
		i = special8From(b, i)
		if i >= len(b) {
			return Value{}, i, decodeErr(i, ErrTruncated, "in a string")
		}
		c := b[i]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			esc, plain = true, false
			i += 2
			if i > len(b) {
				return Value{}, len(b), decodeErr(len(b), ErrTruncated, "in a string")
			}
		case c < 0x20:
			return Value{}, i, decodeErr(i, ErrSyntax, "control character in a string")
		case c >= 0x80:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return Value{}, i, decodeErr(i, ErrInvalidUTF8, "")
			}
			i += size
			plain = false
		default:
			i++
		}
	}
	if esc {
		v, err := d.unescape(start, i)
		return v, i + 1, err
	}
	if plain {
		return d.plainView(start, i), i + 1, nil
	}
	return d.view(start, i), i + 1, nil
}

// unescape writes the string b[start:end], which has escapes, to the slab.
func (d *jsonDecoder) unescape(start, end int) (Value, error) {
	a, b := d.a, d.b
	off := len(a.slab)
	i := start
	for i < end {
		j := bytes.IndexByte(b[i:end], '\\')
		if j < 0 {
			a.slab = append(a.slab, b[i:end]...)
			break
		}
		a.slab = append(a.slab, b[i:i+j]...)
		i += j
		c := b[i+1]
		switch c {
		case '"', '\\', '/':
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			r, ok := hex4(b, i+2, end)
			if !ok {
				a.slab = a.slab[:off]
				return Value{}, decodeErr(i, ErrSyntax, `invalid \u escape`)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(-1), false
				if i+1 < end && b[i] == '\\' && b[i+1] == 'u' {
					r2, ok = hex4(b, i+2, end)
				}
				if ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r, d.norm = utf8.RuneError, true
					}
				} else {
					r, d.norm = utf8.RuneError, true
				}
			}
			a.slab = utf8.AppendRune(a.slab, r)
			continue
		default:
			a.slab = a.slab[:off]
			return Value{}, decodeErr(i, ErrSyntax, "invalid escape")
		}
		a.slab = append(a.slab, c)
		i += 2
	}
	return strValue(String, 0, uint32(off), uint32(len(a.slab)-off)), nil
}

func hex4(b []byte, i, end int) (rune, bool) {
	if i+4 > end {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (d *jsonDecoder) number(i int) (Value, int, error) {
	b := d.b
	start := i
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return Value{}, i, decodeErr(i, ErrTruncated, "in a number")
	}
	digits := i
	switch c := b[i]; {
	case c == '0':
		i++
		if i >= len(b) || b[i] != '.' && b[i]|0x20 != 'e' {
			return IntValue(0), i, nil
		}
	case c >= '1' && c <= '9':
		var u uint64
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			u = u*10 + uint64(b[i]-'0')
			i++
		}
		if i-digits <= 18 && (i >= len(b) || b[i] != '.' && b[i]|0x20 != 'e') {
			if b[start] == '-' {
				return IntValue(-int64(u)), i, nil
			}
			return IntValue(int64(u)), i, nil
		}
	default:
		return Value{}, i, decodeErr(i, ErrSyntax, "invalid number")
	}
	isFloat := false
	if i < len(b) && b[i] == '.' {
		isFloat = true
		j := i + 1
		if i = digitsEnd(b, j); i == j {
			return d.numErr(i)
		}
		if f, ok := exactDecimal(b[digits:i], i-j); ok && (i >= len(b) || b[i]|0x20 != 'e') {
			if b[start] == '-' {
				f = -f
			}
			return FloatValue(f), i, nil
		}
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		isFloat = true
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		if i = digitsEnd(b, j); i == j {
			return d.numErr(i)
		}
	}
	text := unsafe.String(&b[start], i-start)
	if !isFloat {
		n, err := strconv.ParseInt(text, 10, 64)
		if err == nil {
			return IntValue(n), i, nil
		}
		if !d.bigFloat {
			return Value{}, start, decodeErr(start, ErrNumberRange, "integer outside int64")
		}
		d.norm = true
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) && !math.IsInf(f, 0) {
			return FloatValue(f), i, nil // underflow to zero or a denormal
		}
		return Value{}, start, decodeErr(start, ErrNumberRange, "float outside float64")
	}
	return FloatValue(f), i, nil
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactDecimal converts digits "123.45" with frac digits after the point
// when the digits fit in 15 decimal digits: then the mantissa and 10^frac are
// exact floats and one division rounds correctly (strconv's fast path too).
func exactDecimal(text []byte, frac int) (float64, bool) {
	if len(text) > 16 { // 15 digits and the point
		return 0, false
	}
	var u uint64
	for _, c := range text {
		if c != '.' {
			u = u*10 + uint64(c-'0')
		}
	}
	return float64(u) / pow10[frac], true
}

func (d *jsonDecoder) numErr(i int) (Value, int, error) {
	if i >= len(d.b) {
		return Value{}, i, decodeErr(i, ErrTruncated, "in a number")
	}
	return Value{}, i, decodeErr(i, ErrSyntax, "invalid number")
}
