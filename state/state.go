// Package state is the memory of the policy language's stateful
// statements (docs/language.md, "State"): dedupe, rate_limit and sample.
// Each statement of a loaded policy has a Table of keys, bounded and
// evicted least recently used first; a Store holds a policy stage's
// tables, binds a program's statements to them, and saves and loads them
// as one byte snapshot (snapshot.go), which the pipeline keeps with its
// checkpoints and the Collector processor in a storage extension.
//
// It imports nothing of ours, so that the VM, the Lua backend, the
// pipeline and the Collector processor (another module) all share it.
package state

import (
	"fmt"
	"hash/fnv"
	"math"
	"time"
	"unsafe"
)

// Kind is which statement a Table serves.
type Kind uint8

const (
	Dedupe      Kind = iota + 1 // dedupe by … within D [count P]
	RateLimit                   // rate_limit by … to N per D
	Sample                      // sample by … keep 1 in N: stateless, no Table
	SampleEvery                 // sample keep 1 in N: a counter
)

var kindNames = [...]string{Dedupe: "dedupe", RateLimit: "rate_limit", Sample: "sample", SampleEvery: "sample"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Keyed reports whether statements of kind k remember keys (and so have
// a worst-case memory of MaxKeys keys).
func (k Kind) Keyed() bool { return k == Dedupe || k == RateLimit }

// MaxMaxKeys is the largest max_keys a statement may declare: 2^26
// (67 million) keys, 2.4 GiB at BytesPerKey, far past what one stage
// should hold; it also bounds what a snapshot may ask to allocate.
const MaxMaxKeys = 1 << 26

// Spec is one stateful statement as the backends run it.
type Spec struct {
	// ID names the statement's memory: a hash of the policy's name, the
	// statement's text, its place among statements of the same text and
	// its resolved values (StatementID). A statement whose ID changes
	// starts empty.
	ID      uint64
	Kind    Kind
	MaxKeys int   // at most this many keys (Dedupe, RateLimit)
	Window  int64 // D in nanoseconds (Dedupe, RateLimit)
	N       int64 // rate_limit's N, sample's N
}

// StatementID is the ID of a statement of policy whose source text is
// text, the nth (from 0) of that policy with that text, run with spec's
// values (whose ID is ignored).
func StatementID(policy, text string, nth int, s Spec) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%q %q %d %d %d %d %d", policy, text, nth, s.Kind, s.MaxKeys, s.Window, s.N)
	return h.Sum64()
}

// Memory is the most bytes the keys of s can take: the slots and the
// recency log of a table of MaxKeys keys (table.go), each allocation
// rounded up to the heap's 8 KiB pages, and the table itself; 0 for a
// statement that keeps no keys.
func (s Spec) Memory() int64 {
	if !s.Kind.Keyed() {
		return 0
	}
	page := func(n int64) int64 { return (n + 8191) &^ 8191 }
	return page(int64(slotsFor(s.MaxKeys))*entrySize) + page(int64(logFor(s.MaxKeys))*4) + int64(unsafe.Sizeof(Table{}))
}

// BytesPerKey is what one key costs in a full table of max keys
// (Spec.Memory / max), rounded up.
func BytesPerKey(max int) int64 {
	s := Spec{Kind: Dedupe, MaxKeys: max}
	return (s.Memory() + int64(max) - 1) / int64(max)
}

// ParseDuration reads the D of within and per: a Go duration ("500ms",
// "1m", "1h30m") that is positive.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not positive", s)
	}
	return d, nil
}

// Hasher makes the 64-bit hash of one value of a key: FNV-1a over the
// value's kind byte and bytes, then SplitMix64's finalizer, so that the
// low bits sample well (sample by keeps the records whose hash is 0
// modulo N); Combine folds the values of a key of several, in order. Every backend hashes
// through it, so that each keeps the same records. Absent and null are
// one value; an int and a float of the same value are one value, as ==
// says.
type Hasher struct{ h uint64 }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

const (
	tagNull byte = iota
	tagFalse
	tagTrue
	tagInt
	tagFloat
	tagString
	tagTime
)

// NewHasher starts a key.
func NewHasher() Hasher { return Hasher{fnvOffset} }

func (h *Hasher) byte(b byte) { h.h = (h.h ^ uint64(b)) * fnvPrime }

func (h *Hasher) u64(v uint64) {
	for range 8 {
		h.byte(byte(v))
		v >>= 8
	}
}

// Null adds an absent or null value.
func (h *Hasher) Null() { h.byte(tagNull) }

// Bool adds a bool.
func (h *Hasher) Bool(b bool) {
	if b {
		h.byte(tagTrue)
	} else {
		h.byte(tagFalse)
	}
}

// Int adds an int.
func (h *Hasher) Int(i int64) { h.byte(tagInt); h.u64(uint64(i)) }

// Float adds a float; one with an integral value that an int holds is
// that int.
func (h *Hasher) Float(f float64) {
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		h.Int(int64(f))
		return
	}
	h.byte(tagFloat)
	h.u64(math.Float64bits(f))
}

// String adds a string.
func (h *Hasher) String(s string) {
	h.byte(tagString)
	h.u64(uint64(len(s)))
	for i := 0; i < len(s); i++ {
		h.byte(s[i])
	}
}

// Time adds a timestamp (unix nanoseconds).
func (h *Hasher) Time(ns int64) { h.byte(tagTime); h.u64(uint64(ns)) }

// Sum is the value's hash.
func (h *Hasher) Sum() uint64 { return mix(h.h) }

// Combine is the hash of a key of several values: the hash of the values
// before, a, and the hash of the next one, b. A key of one value hashes
// as that value.
func Combine(a, b uint64) uint64 { return mix(a*fnvPrime ^ b) }

// mix is SplitMix64's finalizer.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// Sampled reports whether sample by … keep 1 in n keeps a record whose
// key hashes to key.
func Sampled(key uint64, n int64) bool { return n <= 1 || key%uint64(n) == 0 }
