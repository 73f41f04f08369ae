package lua

import (
	glua "github.com/yuin/gopher-lua"

	"github.com/policyrun/policyrun/builtin"
	"github.com/policyrun/policyrun/internal/digest"
	"github.com/policyrun/policyrun/internal/textenc"
)

// The built-ins of §12, part B (encoding, hashing, network, log formats)
// take and give plain values: strings, ints, maps and arrays, never a
// float, so no argument or result needs a box.
func init() {
	for _, id := range []builtin.ID{
		builtin.EncodeBase64, builtin.DecodeBase64, builtin.EncodeHex, builtin.DecodeHex,
		builtin.EncodeURL, builtin.DecodeURL,
		builtin.MD5Hex, builtin.SHA1Hex, builtin.SHA512Hex, builtin.HMACSHA256Hex, builtin.XXHash64,
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
}
