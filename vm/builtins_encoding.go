package vm

import (
	"regexp"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/textenc"
	"github.com/policyrun/policyrun/spec"
)

// The encoding built-ins (docs/semantics.md, "Encoding"): each
// writes its result to m.buf with package textenc, which the Lua backend
// calls too, and copies it into the arena.
func init() {
	builtins[builtin.EncodeBase64] = encoder(textenc.Base64Len, textenc.AppendBase64)
	builtins[builtin.DecodeBase64] = decoder(textenc.AppendDecodeBase64)
	builtins[builtin.EncodeHex] = encoder(textenc.HexLen, textenc.AppendHex)
	builtins[builtin.DecodeHex] = decoder(textenc.AppendDecodeHex)
	builtins[builtin.EncodeURL] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		x := &args[0]
		n := textenc.URLEncodedLen(x.S)
		if n > m.lim.MaxString {
			return spec.StringTooLong
		}
		if n == len(x.S) {
			*dst = *x // nothing to escape
			return spec.NoFault
		}
		m.buf = textenc.AppendURLEncode(m.buf[:0], x.S)
		m.newString(dst, m.buf)
		return spec.NoFault
	}
	builtins[builtin.DecodeURL] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		x := &args[0]
		if !textenc.NeedsURLDecode(x.S, false) {
			*dst = *x
			return spec.NoFault
		}
		buf, ok := textenc.AppendURLDecode(m.buf[:0], x.S, false)
		m.buf = buf
		if !ok {
			*dst = Null()
			return spec.NoFault
		}
		m.newString(dst, buf)
		return spec.NoFault
	}
}

// encoder is an encode_ built-in whose result, encodedLen bytes for each
// length of input, is held to the string limit before it is written.
func encoder(encodedLen func(n int) int, encode func(dst []byte, s string) []byte) builtinFunc {
	return func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		s := args[0].S
		if encodedLen(len(s)) > m.lim.MaxString {
			return spec.StringTooLong
		}
		m.buf = encode(m.buf[:0], s)
		m.newString(dst, m.buf)
		return spec.NoFault
	}
}

// decoder is a decode_ built-in: the decoded bytes, or null. A decoded
// string is never longer than its encoding, so it cannot be too long.
func decoder(decode func(dst []byte, s string) ([]byte, bool)) builtinFunc {
	return func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		buf, ok := decode(m.buf[:0], args[0].S)
		m.buf = buf
		if !ok {
			*dst = Null()
			return spec.NoFault
		}
		m.newString(dst, buf)
		return spec.NoFault
	}
}
