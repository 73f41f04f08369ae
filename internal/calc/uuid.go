package calc

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"

	"github.com/policyrun/policyrun/spec"
)

// UUIDv4 makes the random bits b a version 4 UUID (RFC 9562, §5.4).
func UUIDv4(b *[16]byte) {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
}

// UUIDv7 makes the random bits b a version 7 UUID of the Unix millisecond
// ms (RFC 9562, §5.7): ms in the first 48 bits, big-endian, then random
// bits.
func UUIDv7(b *[16]byte, ms int64) {
	for i := range 6 {
		b[i] = byte(ms >> (8 * (5 - i)))
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
}

// AppendUUID appends b in the canonical form, lower-case hex in groups of
// 8-4-4-4-12.
func AppendUUID(dst []byte, b *[16]byte) []byte {
	const hex = "0123456789abcdef"
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hex[c>>4], hex[c&15])
	}
	return dst
}

// Rand is the source of the random bits of one machine's (or LState's)
// runs: the program's spec.Random, which tests fix, or else a ChaCha8
// generator seeded from crypto/rand. Reset it when a run starts: a
// spec.Random counts the calls of one run. It is not safe for concurrent
// use.
type Rand struct {
	Fixed spec.Random
	n     int
	rng   *rand.ChaCha8
	bits  [16]byte
}

// Reset starts a run.
func (r *Rand) Reset() { r.n = 0 }

// Next returns the bits of the run's next call, in r's buffer.
func (r *Rand) Next() *[16]byte {
	b := &r.bits
	if r.Fixed != nil {
		r.Fixed(r.n, b)
		r.n++
		return b
	}
	if r.rng == nil {
		var seed [32]byte
		crand.Read(seed[:])
		r.rng = rand.NewChaCha8(seed)
	}
	binary.LittleEndian.PutUint64(b[:8], r.rng.Uint64())
	binary.LittleEndian.PutUint64(b[8:], r.rng.Uint64())
	return b
}
