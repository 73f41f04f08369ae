package vm

import (
	"regexp"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/digest"
	"github.com/policyrun/policyrun/spec"
)

// The hashing built-ins (docs/semantics.md, "Hashing"), all in
// package digest, which the Lua backend calls too. Hex digests go from an
// array on the stack straight into the arena.
func init() {
	builtins[builtin.MD5Hex] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		var h [32]byte
		digest.MD5Hex(&h, bytesOf(args[0].S))
		m.newString(dst, h[:])
		return spec.NoFault
	}
	builtins[builtin.SHA1Hex] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		var h [40]byte
		digest.SHA1Hex(&h, bytesOf(args[0].S))
		m.newString(dst, h[:])
		return spec.NoFault
	}
	builtins[builtin.SHA512Hex] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		var h [128]byte
		digest.SHA512Hex(&h, bytesOf(args[0].S))
		m.newString(dst, h[:])
		return spec.NoFault
	}
	builtins[builtin.HMACSHA256Hex] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		var h [64]byte
		m.buf = digest.HMACSHA256Hex(&h, args[0].S, args[1].S, m.buf)
		m.newString(dst, h[:])
		return spec.NoFault
	}
	builtins[builtin.XXHash64] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Int(digest.XXHash64(args[0].S))
		return spec.NoFault
	}
}
