package record

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"
)

// OTLP/JSON's numbers: the proto3 JSON mapping writes 64-bit integers as
// strings or numbers (in any form that is an integer: 1e3, 10.0) and
// doubles with their special strings; severity_number may be its enum
// name.

// number reads over the JSON number at i.
func (d *otlpJSONDecoder) number(i int) (int, error) {
	b := d.j.b
	if i < len(b) && b[i] != '-' && (b[i] < '0' || b[i] > '9') {
		return i, decodeErr(i, ErrSyntax, "unexpected "+strconv.QuoteRune(rune(b[i])))
	}
	end, ok := numberEnd(b, i)
	if !ok {
		if end >= len(b) {
			return end, decodeErr(end, ErrTruncated, "in a number")
		}
		return end, decodeErr(end, ErrSyntax, "invalid number")
	}
	return end, nil
}

// numberEnd returns the end of the JSON number at i, or where the number
// breaks JSON's grammar and false.
func numberEnd(b []byte, i int) (int, bool) {
	digits := func(i int) (int, bool) {
		j := digitsEnd(b, i)
		return j, j > i
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	var ok bool
	switch {
	case i >= len(b):
		return i, false
	case b[i] == '0':
		i++
	default:
		if b[i] < '1' || b[i] > '9' {
			return i, false
		}
		i, _ = digits(i)
	}
	if i < len(b) && b[i] == '.' {
		if i, ok = digits(i + 1); !ok {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = digits(i); !ok {
			return i, false
		}
	}
	return i, true
}

// What jsonInt finds.
const (
	intOK       = iota
	intFraction // not an integer
	intRange    // an integer too large for uint64
)

// jsonInt reads the text of a JSON number as protojson reads an integer
// field: any number whose value is an integer (10, 1e1, 10.0, 0.1e2, but
// no more than 20 digits before the exponent's shift), as its sign and
// magnitude.
func jsonInt(s []byte) (neg bool, mag uint64, status int) {
	// Most are plain digits, 19 at most (a time in nanoseconds): no
	// uint64 overflows on them, and they are read eight at a time.
	if len(s) <= 19 {
		var m uint64
		i := 0
		for ; i+8 <= len(s); i += 8 {
			v, ok := eightDigits(binary.LittleEndian.Uint64(s[i:]))
			if !ok {
				return jsonNumberInt(s)
			}
			m = m*100_000_000 + v
		}
		for _, c := range s[i:] {
			d := uint64(c) - '0'
			if d > 9 {
				return jsonNumberInt(s)
			}
			m = m*10 + d
		}
		return false, m, intOK
	}
	return jsonNumberInt(s)
}

// jsonNumberInt is jsonInt for any number.
func jsonNumberInt(s []byte) (neg bool, mag uint64, status int) {
	i := 0
	if s[0] == '-' {
		neg, i = true, 1
	}
	start := i
	if s[i] == '0' {
		start++
	}
	i = digitsEnd(s, i)
	intp := s[start:i]
	var frac []byte
	if i < len(s) && s[i] == '.' {
		j := i + 1
		i = digitsEnd(s, j)
		frac = bytes.TrimRight(s[j:i], "0")
	}
	exp := 0
	if i < len(s) {
		i++ // 'e' or 'E'
		eneg := s[i] == '-'
		if s[i] == '-' || s[i] == '+' {
			i++
		}
		for ; i < len(s); i++ {
			if exp < 1<<20 {
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if len(intp) == 0 && len(frac) == 0 {
		return false, 0, intOK
	}
	var digits, more []byte
	n := 0 // zeros to add after them
	if exp >= 0 {
		if len(frac) > exp {
			return neg, 0, intFraction
		}
		if len(intp)+exp > 20 {
			return neg, 0, intRange
		}
		digits, more, n = intp, frac, exp-len(frac)
	} else {
		at := len(intp) + exp
		if len(frac) > 0 || at < 0 {
			return neg, 0, intFraction
		}
		for _, c := range intp[at:] {
			if c != '0' {
				return neg, 0, intFraction
			}
		}
		digits = intp[:at]
	}
	for _, part := range [2][]byte{digits, more} {
		for _, c := range part {
			if mag, status = mulAdd(mag, uint64(c-'0')); status != intOK {
				return neg, 0, status
			}
		}
	}
	for ; n > 0; n-- {
		if mag, status = mulAdd(mag, 0); status != intOK {
			return neg, 0, status
		}
	}
	return neg, mag, intOK
}

// eightDigits returns the value of the eight ASCII digits of v (the
// first in its lowest byte), or false when they are not all digits.
func eightDigits(v uint64) (uint64, bool) {
	const (
		highNibbles = 0xF0F0F0F0F0F0F0F0
		zeros       = 0x3030303030303030
	)
	// A byte is a digit when its high nibble is 3, also after adding 6.
	if v&highNibbles != zeros || (v+0x0606060606060606)&highNibbles != zeros {
		return 0, false
	}
	v -= zeros
	v = v*10 + v>>8 // each even byte: the value of its pair of digits
	v = ((v&0x000000FF000000FF)*(100+1000000<<32) + (v>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
	return v, true
}

func mulAdd(mag, digit uint64) (uint64, int) {
	hi, lo := bits.Mul64(mag, 10)
	lo, carry := bits.Add64(lo, digit, 0)
	if hi != 0 || carry != 0 {
		return 0, intRange
	}
	return lo, intOK
}

// An integer field's type: its size in bits and whether it is signed.
type intType struct {
	bits   int
	signed bool
	name   string
}

var (
	uint64Type = intType{64, false, "a uint64"}
	uint32Type = intType{32, false, "a uint32"}
	int64Type  = intType{64, true, "an int64"}
	enumType   = intType{32, true, "a SeverityNumber"}
)

// integer reads an integer field: a JSON number, or a string holding one
// (as proto3 JSON writes 64-bit integers). It returns the value's bits.
func (d *otlpJSONDecoder) integer(i int, t intType) (uint64, int, error) {
	b := d.j.b
	neg, mag, end, ok := quickInt(b, i)
	ok = ok && quickNumbers
	status := intOK
	if !ok {
		sl := len(d.a.slab)
		var text []byte
		var err error
		if text, end, err = d.numberText(i, t.name, false); err != nil {
			return 0, end, err
		}
		neg, mag, status = jsonInt(text)
		d.a.slab = d.a.slab[:sl] // a string with escapes was unescaped there
	}
	max := uint64(math.MaxUint64) >> (64 - t.bits)
	if t.signed {
		max >>= 1
		if neg {
			max++
		}
	} else if neg && mag != 0 {
		status = intRange
	}
	if status == intOK && mag > max {
		status = intRange
	}
	switch status {
	case intFraction:
		return 0, i, decodeErr(i, ErrFieldType, shortText(b[i:end])+", not "+t.name)
	case intRange:
		return 0, i, decodeErr(i, ErrNumberRange, shortText(b[i:end])+", not "+t.name)
	}
	if neg {
		mag = -mag
	}
	return mag, end, nil
}

// shortText is the JSON text of a value, for an error message.
func shortText(b []byte) string {
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}

// severityNumber reads a SeverityNumber: a number or an enum value's name.
func (d *otlpJSONDecoder) severityNumber(i int) (int64, int, error) {
	b := d.j.b
	if i >= len(b) || b[i] != '"' {
		u, j, err := d.integer(i, enumType)
		return int64(int32(u)), j, err
	}
	sl := len(d.a.slab)
	v, j, err := d.j.str(i)
	if err != nil {
		return 0, j, err
	}
	n, ok := severityByName(d.a.str(v))
	d.a.slab = d.a.slab[:sl]
	if !ok {
		return 0, i, decodeErr(i, ErrFieldType, shortText(b[i:j])+", not "+enumType.name)
	}
	return n, j, nil
}

var severityLevels = [...]string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}

// severityByName returns the number of a SeverityNumber's name
// (SEVERITY_NUMBER_INFO2 is 10).
func severityByName(s string) (int64, bool) {
	s, ok := strings.CutPrefix(s, "SEVERITY_NUMBER_")
	if !ok {
		return 0, false
	}
	if s == "UNSPECIFIED" {
		return 0, true
	}
	for k, level := range severityLevels {
		if rest, ok := strings.CutPrefix(s, level); ok {
			switch rest {
			case "":
				return int64(1 + 4*k), true
			case "2", "3", "4":
				return int64(4*k + int(rest[0]-'0')), true
			}
			return 0, false
		}
	}
	return 0, false
}

// numberText returns the text of the number at i — a JSON number, or a
// string holding one, as proto3 JSON writes 64-bit integers and doubles —
// and where the value ends; what names the field's type for errors. A
// string with escapes is unescaped into the slab: the caller cuts the slab
// back. With special, a string that is not a number but one of the
// doubles' names (NaN, Infinity, -Infinity) is returned for the caller.
func (d *otlpJSONDecoder) numberText(i int, what string, special bool) ([]byte, int, error) {
	b := d.j.b
	switch {
	case i < len(b) && b[i] == '"':
		v, j, err := d.j.str(i)
		if err != nil {
			return nil, j, err
		}
		text := d.a.raw(v)
		if special && (string(text) == "NaN" || string(text) == "Infinity" || string(text) == "-Infinity") {
			return text, j, nil
		}
		if e, ok := numberEnd(text, 0); !ok || e != len(text) {
			return nil, i, decodeErr(i, ErrFieldType, shortText(b[i:j])+", not "+what)
		}
		return text, j, nil
	case i < len(b) && (b[i] == '-' || '0' <= b[i] && b[i] <= '9'):
		end, err := d.number(i)
		if err != nil {
			return nil, end, err
		}
		return b[i:end], end, nil
	}
	return nil, i, d.want(i, what)
}

// quickNumbers is false only in tests, to hold the quick readers below to
// the general path.
var quickNumbers = true

// quickInt reads the commonest integers in one pass: up to 19 digits,
// after a '-' or not, in a string or not, without a fraction or an
// exponent. ok is false for anything else, which numberText and jsonInt
// read (and refuse, when it is not a number).
func quickInt(b []byte, i int) (neg bool, mag uint64, end int, ok bool) {
	quoted := i < len(b) && b[i] == '"'
	j := i
	if quoted {
		j++
	}
	if j < len(b) && b[j] == '-' {
		neg = true
		j++
	}
	start := j
	for ; j < len(b) && j-start < 20; j++ {
		c := uint64(b[j]) - '0'
		if c > 9 {
			break
		}
		mag = mag*10 + c
	}
	switch n := j - start; {
	case n == 0 || n > 19 || n > 1 && b[start] == '0':
		return false, 0, i, false
	case quoted:
		if j >= len(b) || b[j] != '"' {
			return false, 0, i, false
		}
		return neg, mag, j + 1, true
	case j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E'):
		return false, 0, i, false
	}
	return neg, mag, j, true
}

// quickDouble reads the commonest doubles in one pass: a number not in a
// string, of at most 15 digits, with a fraction or not, without an
// exponent. Its digits and the power of ten are then exact in a float64,
// and one division rounds as ParseFloat does. ok is false for anything
// else, which the general path reads. (The JSON decoder's exactDecimal
// is the same arithmetic, on text its scanner has checked.)
func quickDouble(b []byte, i int) (f float64, end int, ok bool) {
	j := i
	neg := j < len(b) && b[j] == '-'
	if neg {
		j++
	}
	start := j
	var m uint64
	for ; j < len(b) && j-start < 16 && '0' <= b[j] && b[j] <= '9'; j++ {
		m = m*10 + uint64(b[j]-'0')
	}
	nd, frac := j-start, 0
	if nd == 0 || nd > 1 && b[start] == '0' {
		return 0, i, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		fs := j
		for ; j < len(b) && j-fs < 16 && '0' <= b[j] && b[j] <= '9'; j++ {
			m = m*10 + uint64(b[j]-'0')
		}
		frac = j - fs
		nd += frac
		if frac == 0 {
			return 0, i, false
		}
	}
	if nd > 15 || j < len(b) && (b[j] == 'e' || b[j] == 'E' || '0' <= b[j] && b[j] <= '9') {
		return 0, i, false
	}
	f = float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	return f, j, true
}

// double reads a double: a number, a string holding one, or "NaN",
// "Infinity" or "-Infinity".
func (d *otlpJSONDecoder) double(i int) (float64, int, error) {
	b := d.j.b
	if f, end, ok := quickDouble(b, i); ok && quickNumbers {
		return f, end, nil
	}
	sl := len(d.a.slab)
	defer func() { d.a.slab = d.a.slab[:sl] }()
	text, end, err := d.numberText(i, "a double", true)
	if err != nil {
		return 0, end, err
	}
	if b[i] == '"' {
		switch string(text) {
		case "NaN":
			return math.NaN(), end, nil
		case "Infinity":
			return math.Inf(1), end, nil
		case "-Infinity":
			return math.Inf(-1), end, nil
		}
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(text), len(text)), 64)
	if err != nil {
		return 0, i, decodeErr(i, ErrNumberRange, shortText(b[i:end])+", not a double")
	}
	return f, end, nil
}
