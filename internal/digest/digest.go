// Package digest is the policy built-ins hash64 and sha256_hex: the one
// implementation of each behind the VM's and the Lua backend's.
package digest

import (
	"crypto/sha256"
	"encoding/hex"
)

// Hash64 is hash64(s): the 64-bit FNV-1a hash of the bytes of s shifted right
// by 11 bits, a non-negative integer below 2^53, so that it is exact in a
// float64 (the Lua backend's numbers) and both backends agree.
func Hash64(s string) int64 {
	h := uint64(14695981039346656037) // FNV-1a 64 offset basis
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211 // FNV-1a 64 prime
	}
	return int64(h >> 11)
}

// SHA256Hex is sha256_hex(s): the SHA-256 of the bytes of s in lower-case
// hex, written to dst (a caller's array, so that the VM allocates nothing).
func SHA256Hex(dst *[2 * sha256.Size]byte, s []byte) {
	sum := sha256.Sum256(s)
	hex.Encode(dst[:], sum[:])
}
