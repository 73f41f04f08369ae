// Package digest is the policy's hash built-ins (hash64, xxhash64,
// sha256_hex, md5_hex, sha1_hex, sha512_hex, hmac_sha256_hex): the one
// implementation of each behind the VM's and the Lua backend's. Hex
// digests are written to arrays of the caller's, so that the VM allocates
// nothing.
package digest

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"

	"github.com/cespare/xxhash/v2"
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

// XXHash64 is xxhash64(s): XXH64 of the bytes of s with seed 0, shifted
// right by 11 bits as Hash64 is, so that it is exact in a float64.
func XXHash64(s string) int64 { return int64(xxhash.Sum64String(s) >> 11) }

// MD5Hex is md5_hex(s), in lower-case hex.
func MD5Hex(dst *[2 * md5.Size]byte, s []byte) {
	sum := md5.Sum(s)
	hex.Encode(dst[:], sum[:])
}

// SHA1Hex is sha1_hex(s), in lower-case hex.
func SHA1Hex(dst *[2 * sha1.Size]byte, s []byte) {
	sum := sha1.Sum(s)
	hex.Encode(dst[:], sum[:])
}

// SHA512Hex is sha512_hex(s), in lower-case hex.
func SHA512Hex(dst *[2 * sha512.Size]byte, s []byte) {
	sum := sha512.Sum512(s)
	hex.Encode(dst[:], sum[:])
}

// HMACSHA256Hex is hmac_sha256_hex(s, key) (RFC 2104 over SHA-256), in
// lower-case hex. It is HMAC written out over sha256.Sum256 so that it
// allocates nothing: scratch is the caller's buffer for the padded key and
// the message, returned grown for the next call.
func HMACSHA256Hex(dst *[2 * sha256.Size]byte, s, key string, scratch []byte) []byte {
	const block = sha256.BlockSize
	var k [block]byte
	buf := scratch[:0]
	if len(key) > block {
		buf = append(buf, key...)
		sum := sha256.Sum256(buf)
		copy(k[:], sum[:])
		buf = buf[:0]
	} else {
		copy(k[:], key)
	}
	for _, c := range k {
		buf = append(buf, c^0x36)
	}
	buf = append(buf, s...)
	inner := sha256.Sum256(buf)
	buf = buf[:0]
	for _, c := range k {
		buf = append(buf, c^0x5c)
	}
	buf = append(buf, inner[:]...)
	sum := sha256.Sum256(buf)
	hex.Encode(dst[:], sum[:])
	return buf
}
