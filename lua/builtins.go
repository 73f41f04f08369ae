package lua

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/digest"
	"github.com/policyrun/policyrun/internal/grok"
	"github.com/policyrun/policyrun/internal/kvtext"
	"github.com/policyrun/policyrun/internal/luasandbox"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// The built-ins whose exact semantics (Unicode, RE2, strftime, JSON, float
// formatting, hashing) are Go's are Go functions in the runtime table, the
// way Fluent Bit's Lua has C helpers. Each takes and returns values of the
// transpiled representation.
func (s *state) register() {
	L := s.L
	fn := func(name string, f func(L *glua.LState) int) {
		s.R.RawSetString(name, L.NewFunction(f))
	}
	impl := s.impl
	strImpl := func(id builtin.ID, f func(string) string) {
		impl(id, func(L *glua.LState) int {
			L.Push(s.str(f(string(L.CheckString(1)))))
			return 1
		})
	}
	fn("gofmod", func(L *glua.LState) int {
		L.Push(glua.LNumber(math.Mod(float64(L.CheckNumber(1)), float64(L.CheckNumber(2)))))
		return 1
	})
	strImpl(builtin.Lower, strings.ToLower)
	strImpl(builtin.Upper, strings.ToUpper)
	strImpl(builtin.Trim, func(x string) string { return strings.TrimFunc(x, unicode.IsSpace) })
	impl(builtin.Replace, func(L *glua.LState) int {
		x, old, nw := L.CheckString(1), L.CheckString(2), L.CheckString(3)
		if old == "" {
			L.Push(glua.LString(x))
			return 1
		}
		L.Push(s.str(strings.ReplaceAll(x, old, nw)))
		return 1
	})
	impl(builtin.Split, func(L *glua.LState) int {
		x, sep := L.CheckString(1), L.CheckString(2)
		var parts []string
		if sep == "" {
			for len(x) > 0 {
				_, n := utf8.DecodeRuneInString(x)
				parts = append(parts, x[:n])
				x = x[n:]
			}
		} else {
			parts = strings.Split(x, sep)
		}
		t := s.newArr(len(parts))
		for i, p := range parts {
			t.RawSetInt(i+1, glua.LString(p))
		}
		L.Push(t)
		return 1
	})
	impl(builtin.Join, func(L *glua.LState) int {
		a, sep := L.CheckTable(1), L.CheckString(2)
		var b strings.Builder
		n := a.Len()
		for i := 1; i <= n; i++ {
			if i > 1 {
				b.WriteString(sep)
			}
			v, ok := a.RawGetInt(i).(glua.LString)
			if !ok {
				// An element of another kind in a declared array<string>.
				s.fault(spec.TypeMismatch)
			}
			b.WriteString(string(v))
			if b.Len() > s.lim.MaxString {
				s.fault(spec.StringTooLong)
			}
		}
		L.Push(glua.LString(b.String()))
		return 1
	})
	re := func(L *glua.LState, i int) *regexp.Regexp {
		return L.CheckUserData(i).Value.(*regexp.Regexp)
	}
	impl(builtin.Matches, func(L *glua.LState) int {
		L.Push(glua.LBool(re(L, 2).MatchString(L.CheckString(1))))
		return 1
	})
	impl(builtin.Capture, func(L *glua.LState) int {
		x, r := L.CheckString(1), re(L, 2)
		m := r.FindStringSubmatchIndex(x)
		if m == nil {
			L.Push(s.null)
			return 1
		}
		var pairs []kv
		grok.Fields(r, x, m, true, func(name, value string) { pairs = append(pairs, kv{name, value}) })
		L.Push(s.strMap(pairs, true))
		return 1
	})
	impl(builtin.ReplaceRe, func(L *glua.LState) int {
		x, r, repl := L.CheckString(1), re(L, 2), L.CheckString(3)
		L.Push(s.str(r.ReplaceAllString(x, repl)))
		return 1
	})
	impl(builtin.ToString, func(L *glua.LState) int {
		L.Push(s.str(s.toString(L.Get(1))))
		return 1
	})
	impl(builtin.ToInt, func(L *glua.LState) int {
		L.Push(s.toInt(L.Get(1)))
		return 1
	})
	impl(builtin.ToFloat, func(L *glua.LState) int {
		L.Push(s.toFloat(L.Get(1)))
		return 1
	})
	impl(builtin.ToBool, func(L *glua.LState) int {
		L.Push(s.toBool(L.Get(1)))
		return 1
	})
	impl(builtin.ParseJSON, func(L *glua.LState) int {
		x := L.CheckString(1)
		s.scratch.Reset()
		v, err := s.scratch.DecodeJSONValue([]byte(x))
		if err != nil {
			L.Push(s.null)
			return 1
		}
		L.Push(s.fromValue(s.scratch, v))
		return 1
	})
	impl(builtin.ParseKV, func(L *glua.LState) int {
		L.Push(s.strMap(parseKV(L.CheckString(1), L.CheckString(2), L.CheckString(3))))
		return 1
	})
	impl(builtin.ParseLogfmt, func(L *glua.LState) int {
		L.Push(s.strMap(parseLogfmt(L.CheckString(1))))
		return 1
	})
	impl(builtin.Hash64, func(L *glua.LState) int {
		L.Push(glua.LNumber(digest.Hash64(L.CheckString(1))))
		return 1
	})
	impl(builtin.Sha256Hex, func(L *glua.LState) int {
		var h [64]byte
		digest.SHA256Hex(&h, []byte(L.CheckString(1)))
		L.Push(glua.LString(string(h[:])))
		return 1
	})
	s.registerB(impl)
	for _, r := range registrars {
		r(s)
	}
}

// registrars register the Go helpers of families of built-ins kept in
// files of their own (builtins_*.go).
var registrars = [...]func(s *state){
	(*state).registerCollections,
	(*state).registerIdentity,
	(*state).registerNumbers,
	(*state).registerStrings,
	(*state).registerTime,
}

// impl registers the Go implementation of a built-in as R.<name>.
func (s *state) impl(id builtin.ID, f func(L *glua.LState) int) {
	s.R.RawSetString(id.String(), s.L.NewFunction(f))
}

// fault raises a policy fault from a Go helper.
func (s *state) fault(reason spec.Reason) {
	s.L.Error(s.R.RawGetString("FAULTS").(*glua.LTable).RawGetString(reason.String()), 0)
}

// str returns x as a Lua string, faulting when it is over the size limit.
func (s *state) str(x string) glua.LValue {
	if len(x) > s.lim.MaxString {
		s.fault(spec.StringTooLong)
	}
	return glua.LString(x)
}

type kv struct{ k, v string }

func (s *state) strMap(pairs []kv, ok bool) glua.LValue {
	if !ok {
		return s.null
	}
	t, o := s.newMap(len(pairs))
	n := 0
	for _, p := range pairs {
		if t.RawGetString(p.k) == glua.LNil {
			n++
			o.RawSetInt(n, glua.LString(p.k))
		}
		t.RawSetString(p.k, glua.LString(p.v))
	}
	return t
}

func (s *state) toString(v glua.LValue) string {
	switch s.kindOf(v) {
	case record.Absent, record.Null:
		return ""
	case record.Bool:
		return strconv.FormatBool(bool(v.(glua.LBool)))
	case record.Int:
		return strconv.FormatInt(luasandbox.Int(float64(v.(glua.LNumber))), 10)
	case record.String:
		return string(v.(glua.LString))
	case record.Bytes:
		return string(v.(*glua.LTable).RawGetInt(1).(glua.LString))
	case record.Timestamp:
		return time.Unix(0, tsNanos(v.(*glua.LTable))).UTC().Format(time.RFC3339Nano)
	}
	// Floats, maps and arrays are written as the record encoder writes them.
	s.buf = s.scratch.AppendJSON(s.buf[:0], s.scratchValue(v))
	return string(s.buf)
}

func (s *state) toInt(v glua.LValue) glua.LValue {
	switch s.kindOf(v) {
	case record.Int:
		return v
	case record.Float:
		f := float64(v.(*glua.LTable).RawGetInt(1).(glua.LNumber))
		t := math.Trunc(f)
		if t != t || t >= 9223372036854775808.0 || t < -9223372036854775808.0 {
			return s.null
		}
		return glua.LNumber(t)
	case record.String:
		i, err := strconv.ParseInt(string(v.(glua.LString)), 10, 64)
		if err != nil {
			return s.null
		}
		return glua.LNumber(i)
	case record.Bool:
		return glua.LNumber(boolNum(v))
	case record.Timestamp:
		return glua.LNumber(tsNanos(v.(*glua.LTable)))
	}
	return s.null
}

func (s *state) toFloat(v glua.LValue) glua.LValue {
	switch s.kindOf(v) {
	case record.Int:
		return s.box(float64(v.(glua.LNumber)))
	case record.Float:
		return v
	case record.String:
		str := string(v.(glua.LString))
		if !kvtext.IsDecimal(str) {
			return s.null // strconv also takes hex floats and 1_000
		}
		f, err := strconv.ParseFloat(str, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return s.null
		}
		return s.box(f)
	case record.Bool:
		return s.box(boolNum(v))
	}
	return s.null
}

// boolNum is the number to_int and to_float make of the Lua boolean v: 1
// or 0.
func boolNum(v glua.LValue) float64 {
	if v.(glua.LBool) {
		return 1
	}
	return 0
}

func (s *state) toBool(v glua.LValue) glua.LValue {
	switch s.kindOf(v) {
	case record.Bool:
		return v
	case record.String:
		switch v.(glua.LString) {
		case "true":
			return glua.LTrue
		case "false":
			return glua.LFalse
		}
	case record.Int:
		return glua.LBool(v.(glua.LNumber) != 0)
	}
	return s.null
}

// parseKV implements parse_kv (docs/semantics.md) with the scanner the VM uses.
func parseKV(x, pairSep, kvSep string) ([]kv, bool) {
	var sc kvtext.Pairs
	sc.Init(x, pairSep, kvSep)
	var out []kv
	for sc.Next() {
		out = append(out, kv{sc.Key(), sc.Value()})
	}
	return out, sc.Err() == nil
}

// parseLogfmt implements parse_logfmt (docs/semantics.md) with the scanner
// the VM uses.
func parseLogfmt(x string) ([]kv, bool) {
	var sc kvtext.Logfmt
	sc.Init(x)
	var out []kv
	for sc.Next() {
		v := sc.Raw()
		if !sc.Plain() {
			v = string(sc.AppendValue(nil))
		}
		out = append(out, kv{sc.Key(), v})
	}
	return out, sc.Err() == nil
}
