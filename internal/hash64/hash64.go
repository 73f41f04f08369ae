// Package hash64 is the policy built-in hash64, the one implementation
// behind the VM's and the Lua backend's.
package hash64

// Sum is hash64(s): the 64-bit FNV-1a hash of the bytes of s shifted right
// by 11 bits, a non-negative integer below 2^53, so that it is exact in a
// float64 (the Lua backend's numbers) and both backends agree.
func Sum(s string) int64 {
	h := uint64(14695981039346656037) // FNV-1a 64 offset basis
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211 // FNV-1a 64 prime
	}
	return int64(h >> 11)
}
