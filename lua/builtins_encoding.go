package lua

import (
	"strings"

	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/digest"
	"github.com/policyrun/policyrun/internal/netaddr"
	"github.com/policyrun/policyrun/internal/textenc"
	"github.com/policyrun/policyrun/internal/urltext"
)

// The encoding, hashing, network and log-format built-ins (docs/language.md) (encoding, hashing, network, log formats)
// take and give plain values: strings, ints, maps and arrays, never a
// float, so no argument or result needs a box.
func init() {
	for _, id := range []builtin.ID{
		builtin.EncodeBase64, builtin.DecodeBase64, builtin.EncodeHex, builtin.DecodeHex,
		builtin.EncodeURL, builtin.DecodeURL,
		builtin.MD5Hex, builtin.SHA1Hex, builtin.SHA512Hex, builtin.HMACSHA256Hex, builtin.XXHash64,
		builtin.IPInCIDR, builtin.IsIPv4, builtin.IsIPv6, builtin.ParseURL, builtin.ParseQuery,
	} {
		conv[id] = plain
	}
}

// registerB registers the Go helpers of part B: each calls the package
// that the VM calls too, so that the backends agree by construction.
func (s *state) registerB(impl func(builtin.ID, func(*glua.LState) int)) {
	// bytesFn is a built-in from a string to a string built with buf.
	bytesFn := func(id builtin.ID, f func(dst []byte, x string) []byte) {
		impl(id, func(L *glua.LState) int {
			s.buf = f(s.buf[:0], L.CheckString(1))
			L.Push(s.str(string(s.buf)))
			return 1
		})
	}
	// maybeFn is one from a string to a string or null.
	maybeFn := func(id builtin.ID, f func(dst []byte, x string) ([]byte, bool)) {
		impl(id, func(L *glua.LState) int {
			var ok bool
			s.buf, ok = f(s.buf[:0], L.CheckString(1))
			if !ok {
				L.Push(s.null)
				return 1
			}
			L.Push(glua.LString(s.buf))
			return 1
		})
	}
	bytesFn(builtin.EncodeBase64, textenc.AppendBase64)
	maybeFn(builtin.DecodeBase64, textenc.AppendDecodeBase64)
	bytesFn(builtin.EncodeHex, textenc.AppendHex)
	maybeFn(builtin.DecodeHex, textenc.AppendDecodeHex)
	bytesFn(builtin.EncodeURL, textenc.AppendURLEncode)
	maybeFn(builtin.DecodeURL, func(dst []byte, x string) ([]byte, bool) {
		return textenc.AppendURLDecode(dst, x, false)
	})

	hexFn := func(id builtin.ID, f func(x string) string) {
		impl(id, func(L *glua.LState) int {
			L.Push(glua.LString(f(L.CheckString(1))))
			return 1
		})
	}
	hexFn(builtin.MD5Hex, func(x string) string {
		var h [32]byte
		digest.MD5Hex(&h, []byte(x))
		return string(h[:])
	})
	hexFn(builtin.SHA1Hex, func(x string) string {
		var h [40]byte
		digest.SHA1Hex(&h, []byte(x))
		return string(h[:])
	})
	hexFn(builtin.SHA512Hex, func(x string) string {
		var h [128]byte
		digest.SHA512Hex(&h, []byte(x))
		return string(h[:])
	})
	impl(builtin.HMACSHA256Hex, func(L *glua.LState) int {
		var h [64]byte
		s.buf = digest.HMACSHA256Hex(&h, L.CheckString(1), L.CheckString(2), s.buf)
		L.Push(glua.LString(string(h[:])))
		return 1
	})
	impl(builtin.XXHash64, func(L *glua.LState) int {
		L.Push(glua.LNumber(digest.XXHash64(L.CheckString(1))))
		return 1
	})

	s.registerNet(impl)
	s.registerLogs(impl)
}

func (s *state) registerNet(impl func(builtin.ID, func(*glua.LState) int)) {
	impl(builtin.IPInCIDR, func(L *glua.LState) int {
		L.Push(glua.LBool(netaddr.InCIDR(L.CheckString(1), L.CheckString(2))))
		return 1
	})
	impl(builtin.IsIPv4, func(L *glua.LState) int {
		L.Push(glua.LBool(netaddr.IsIPv4(L.CheckString(1))))
		return 1
	})
	impl(builtin.IsIPv6, func(L *glua.LState) int {
		L.Push(glua.LBool(netaddr.IsIPv6(L.CheckString(1))))
		return 1
	})
	impl(builtin.ParseURL, func(L *glua.LState) int {
		u, ok := urltext.Parse(L.CheckString(1))
		if !ok {
			L.Push(s.null)
			return 1
		}
		t, o := s.newMap(7)
		add := func(k string, v glua.LValue) {
			o.RawSetInt(o.Len()+1, glua.LString(k))
			t.RawSetString(k, v)
		}
		dec := func(x string) glua.LValue { return glua.LString(urltext.Decode(nil, x, false)) }
		add("scheme", glua.LString(strings.ToLower(u.Scheme)))
		add("user", dec(u.User))
		add("host", dec(u.Host))
		if u.HasPort {
			add("port", glua.LNumber(u.Port))
		} else {
			add("port", s.null)
		}
		add("path", dec(u.Path))
		var q urltext.Query
		q.Init(u.Query)
		add("query", s.strMap(queryPairs(&q), true))
		add("fragment", dec(u.Fragment))
		L.Push(t)
		return 1
	})
	impl(builtin.ParseQuery, func(L *glua.LState) int {
		var q urltext.Query
		if !q.Init(L.CheckString(1)) {
			L.Push(s.null)
			return 1
		}
		L.Push(s.strMap(queryPairs(&q), true))
		return 1
	})
}

// queryPairs are q's pairs, decoded.
func queryPairs(q *urltext.Query) []kv {
	var out []kv
	for q.Next() {
		out = append(out, kv{string(urltext.Decode(nil, q.Key(), true)), string(urltext.Decode(nil, q.Value(), true))})
	}
	return out
}
