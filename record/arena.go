package record

import (
	"strconv"
	"unsafe"

	"github.com/policyrun/policyrun/internal/indextable"
)

// Default limits; see Limits.
const (
	DefaultMaxDepth = 128
	DefaultMaxInput = 16 << 20
)

// Limits bound what a decode accepts. Zero fields mean the defaults.
type Limits struct {
	// MaxDepth is the deepest nesting of arrays and maps; the root map is
	// depth 1. Default 128.
	MaxDepth int
	// MaxInput is the largest JSON line or msgpack event, in bytes.
	// Default 16 MiB.
	MaxInput int
	// RejectBigInts makes JSON integers outside int64 an ErrNumberRange
	// error. By default they decode as floats, as in Fluent Bit and Vector.
	RejectBigInts bool
	// MaxRecords is the most LogRecords one OTLP request may decode to;
	// more are an ErrTooManyRecords error. Bytes do not bound it: an
	// empty LogRecord is two bytes on the wire. 0: no bound.
	MaxRecords int
}

// recordLimit is the length of a decode's record list past which it
// holds too many records, having started at n0; 0 for no bound.
func (l *Limits) recordLimit(n0 int) int {
	if l.MaxRecords <= 0 {
		return 0
	}
	return n0 + l.MaxRecords
}

// tooMany is the error of a request with more than MaxRecords records.
func (l *Limits) tooMany(off int) error {
	return decodeErr(off, ErrTooManyRecords, "the request holds more than "+strconv.Itoa(l.MaxRecords)+" LogRecords")
}

func (l *Limits) maxDepth() int {
	if l.MaxDepth <= 0 {
		return DefaultMaxDepth
	}
	return l.MaxDepth
}

func (l *Limits) maxInput() int {
	if l.MaxInput <= 0 {
		return DefaultMaxInput
	}
	return l.MaxInput
}

// Mode says where decoded strings live.
type Mode uint8

const (
	// Referenced strings point into the input, which the caller must keep
	// unchanged until the arena's next Reset. Strings with JSON escapes are
	// unescaped into the slab.
	Referenced Mode = iota
	// Owned strings are copied into the arena's slab; the input may be
	// reused as soon as the decode returns.
	Owned
)

// Arena owns the memory of a batch of records: value nodes, a byte slab for
// owned strings, references to input buffers, and the Record structs. It is
// not safe for concurrent use. The zero Arena is ready to use.
//
// Offsets are 32 bits: between Resets an arena holds at most 4 GiB of owned
// bytes and 2^32 nodes, far more than a batch of records should.
type Arena struct {
	// Limits apply to every decode into the arena.
	Limits Limits

	nodes   []Value
	slab    []byte
	bufs    [][]byte
	scratch []Value // pending map entries and array elements while decoding
	// pos holds, while an edited record is written, where the entries of
	// a map lay in its line when they cannot be told from its keys (see
	// json_splice.go); a stack, each map's part dropped when it is done.
	pos     []uint32
	recs    []*Record
	nrec    int
	texts   []textState      // the textStates of records decoded from text
	dedupT  indextable.Table // finds duplicate keys in big maps
	locBuf  []int32          // positions of a path's steps during an edit (see locate)
	strMark int              // start of the string being built
	// otlpEmpty is the root of an OTLP record at the view's defaults, its
	// keys in input buffer otlpKeys, built by NewOTLPRecord once after
	// each Reset (Absent until then) and shared by its records.
	otlpEmpty Value
	otlpKeys  uint32
	// gen counts Resets (and rollbacks), so that what is kept of the
	// arena's strings between records (Generation) is known to be stale.
	gen uint64
}

// NewArena returns an empty arena.
func NewArena() *Arena { return &Arena{} }

// Reset forgets every record, value and input reference of the arena and
// keeps its memory for the next batch. Values, records and byte views taken
// from the arena before Reset must not be used after it.
func (a *Arena) Reset() {
	a.nodes = a.nodes[:0]
	a.slab = a.slab[:0]
	clear(a.bufs) // let the GC have the input lines
	a.bufs = a.bufs[:0]
	a.scratch = a.scratch[:0]
	a.nrec = 0
	a.texts = a.texts[:0]
	a.otlpEmpty = Value{}
	a.gen++
}

// Generation changes at every Reset, and whenever else values of the
// arena may have gone: a caller that keeps a value of the arena across
// records (a program's constants, copied into it once) keeps it while the
// generation is the one it was made in.
func (a *Arena) Generation() uint64 { return a.gen }

// Used returns the bytes of values the arena holds: its nodes and its
// slab, what a run's values cost, garbage included, until Reset.
func (a *Arena) Used() int { return len(a.nodes)*int(unsafe.Sizeof(Value{})) + len(a.slab) }

// Reserved returns the bytes the arena holds: its nodes, slab and scratch
// by capacity, and its Record structs and textStates. The otlp input
// counts them against its bound on the memory of requests in hand.
func (a *Arena) Reserved() int {
	return cap(a.nodes)*int(unsafe.Sizeof(Value{})) + cap(a.slab) +
		cap(a.scratch)*int(unsafe.Sizeof(Value{})) + a.dedupT.Reserved() +
		cap(a.pos)*4 +
		len(a.recs)*int(unsafe.Sizeof(Record{})) +
		cap(a.texts)*int(unsafe.Sizeof(textState{}))
}

// NewConstString copies s into the slab, as NewStringFrom, for a string
// that many records will share (a program's constant): it is marked for
// the JSON encoder when it needs no escapes, at the cost of a scan now.
func (a *Arena) NewConstString(s string) Value {
	if !plainJSON(unsafe.Slice(unsafe.StringData(s), len(s))) {
		return a.newStr(s, false)
	}
	return a.newFramed(`"`, s, `"`, flagPlain|flagQuoted)
}

// newFramed copies s into the slab between pre and post and returns it,
// with the flags that say what lies around it.
func (a *Arena) newFramed(pre, s, post string, flags uint32) Value {
	a.slab = append(a.slab, pre...)
	off := len(a.slab)
	a.slab = append(append(a.slab, s...), post...)
	v := strValue(String, 0, uint32(off), uint32(len(s)))
	v.h |= flags
	return v
}

// newRecord returns a cleared Record from the arena's pool.
func (a *Arena) newRecord() *Record {
	if a.nrec == len(a.recs) {
		a.recs = append(a.recs, &Record{})
	}
	r := a.recs[a.nrec]
	a.nrec++
	*r = Record{a: a}
	return r
}

// NewRecord returns an empty record (an empty map, no tag, time 0).
func (a *Arena) NewRecord() *Record {
	r := a.newRecord()
	r.base = containerValue(Map, uint32(len(a.nodes)), 0)
	r.root = r.base
	return r
}

// mark and rollback undo a failed decode.
type mark struct{ nodes, slab, bufs, scratch int }

func (a *Arena) mark() mark {
	return mark{len(a.nodes), len(a.slab), len(a.bufs), len(a.scratch)}
}

func (a *Arena) rollback(m mark) {
	if a.otlpEmpty.kind() == Map && (int(a.otlpEmpty.off()) >= m.nodes || int(a.otlpKeys) > m.bufs) {
		a.otlpEmpty = Value{} // built after the mark: its nodes go
	}
	a.nodes = a.nodes[:m.nodes]
	a.slab = a.slab[:m.slab]
	a.gen++
	a.rollbackBufs(m)
	a.scratch = a.scratch[:m.scratch]
}

func (a *Arena) rollbackBufs(m mark) {
	clear(a.bufs[m.bufs:])
	a.bufs = a.bufs[:m.bufs]
}

// addBuf registers an input buffer for referenced strings and returns its ref.
func (a *Arena) addBuf(b []byte) uint32 {
	a.bufs = append(a.bufs, b)
	return uint32(len(a.bufs))
}

// Bytes returns the bytes of a String or Bytes value as a view into the
// arena (or the input it references); nil for other kinds. Do not modify it.
func (a *Arena) Bytes(v Value) []byte {
	if v.kind() != String && v.kind() != Bytes {
		return nil
	}
	return a.raw(v)
}

func (a *Arena) raw(v Value) []byte {
	off, n := v.off(), v.n()
	if v.ref == 0 {
		return a.slab[off : off+n : off+n]
	}
	return a.bufs[v.ref-1][off : off+n : off+n]
}

// Str returns the bytes of a String or Bytes value as a string without
// copying. The string is valid until the arena's next Reset (and, for
// referenced values, only while the input is unchanged).
func (a *Arena) Str(v Value) string {
	if k := v.kind(); k != String && k != Bytes {
		return ""
	}
	return a.str(v) // "" when empty
}

// NewString copies b into the slab and returns it as a String value.
func (a *Arena) NewString(b []byte) Value {
	off := len(a.slab)
	a.slab = append(a.slab, b...)
	return strValue(String, 0, uint32(off), uint32(len(b)))
}

// NewStringFrom copies s into the slab and returns it as a String value.
func (a *Arena) NewStringFrom(s string) Value { return a.newStr(s, false) }

// newStr copies s into the slab, marked plain (needing no escapes in JSON,
// see flagPlain) when the caller knows it is.
func (a *Arena) newStr(s string, plain bool) Value {
	off := len(a.slab)
	a.slab = append(a.slab, s...)
	v := strValue(String, 0, uint32(off), uint32(len(s)))
	if plain {
		v.h |= flagPlain
	}
	return v
}

// NewBytes copies b into the slab and returns it as a Bytes value.
func (a *Arena) NewBytes(b []byte) Value {
	v := a.NewString(b)
	v.setKind(Bytes)
	return v
}

// StringBuilder builds a string directly in an arena's slab, for backends
// that make strings while they run (the VM's concatenation and string
// built-ins): no heap allocation, and the string lives as long as the
// batch. An embedder that has the bytes already uses Arena.NewString.
//
// Call Start, write with WriteString, WriteBytes and WriteByte, then call
// End. One string is built at a time in an arena, and until End nothing
// else may add to the slab (no decode, NewString, builder key or record
// edit); the bytes of other values may be read and written into it.
//
// A StringBuilder is a handle on its arena's one builder, costing nothing
// to get or copy: Arena.StringBuilder may be called for each step. The
// zero StringBuilder is not usable.
type StringBuilder struct{ a *Arena }

// StringBuilder returns the arena's string builder.
func (a *Arena) StringBuilder() StringBuilder { return StringBuilder{a} }

// Start begins a string.
func (b StringBuilder) Start() { b.a.strMark = len(b.a.slab) }

// StartWith begins a string that starts with s. When s is the string the
// slab ends with, as a string that a loop grows by concatenation is, its
// bytes are not copied again: the new string takes them in place (s, a
// view of them, stays as it was). A string built in n steps then costs
// the arena its length, not n times it.
func (b StringBuilder) StartWith(s string) {
	a := b.a
	if n := len(s); n > 0 && n <= len(a.slab) && unsafe.StringData(s) == &a.slab[len(a.slab)-n] {
		a.strMark = len(a.slab) - n
		return
	}
	a.strMark = len(a.slab)
	a.slab = append(a.slab, s...)
}

// WriteBytes appends p to the string being built.
func (b StringBuilder) WriteBytes(p []byte) { b.a.slab = append(b.a.slab, p...) }

// WriteString appends s to the string being built.
func (b StringBuilder) WriteString(s string) { b.a.slab = append(b.a.slab, s...) }

// WriteByte appends c to the string being built.
func (b StringBuilder) WriteByte(c byte) error { b.a.slab = append(b.a.slab, c); return nil }

// End finishes the string being built and returns it.
func (b StringBuilder) End() Value {
	a := b.a
	return strValue(String, 0, uint32(a.strMark), uint32(len(a.slab)-a.strMark))
}

// Len returns the length of a string or bytes (in bytes), the number of
// elements of an array or of entries of a map, and 0 for other kinds.
func (a *Arena) Len(v Value) int {
	switch v.kind() {
	case String, Bytes, Array, Map:
		return int(v.n())
	}
	return 0
}

// Index returns element i of an array; negative i counts from the end.
func (a *Arena) Index(v Value, i int) (Value, bool) {
	if v.kind() != Array {
		return Value{}, false
	}
	n := int(v.n())
	if i < 0 {
		i += n
	}
	if uint(i) >= uint(n) {
		return Value{}, false
	}
	return a.nodes[int(v.off())+i], true
}

// Key looks key up in a map.
func (a *Arena) Key(v Value, key []byte) (Value, bool) {
	if v.kind() != Map {
		return Value{}, false
	}
	if len(key) == 0 {
		return a.lookup(v, "", 0)
	}
	return a.lookup(v, unsafe.String(&key[0], len(key)), keySig(key))
}

// lookup finds key, of signature sig (0 if not known), in map m.
func (a *Arena) lookup(m Value, key string, sig uint8) (Value, bool) {
	i := a.find(m, key, sig)
	if i < 0 {
		return Value{}, false
	}
	return a.nodes[i+1], true
}

// find returns the node index of the entry of key, of signature sig (0 if
// not known), in map m, or -1. It scans the entries, comparing the bytes of
// a key only when its length and signature match.
func (a *Arena) find(m Value, key string, sig uint8) int {
	first, n := int(m.off()), int(m.n())
	nodes := a.nodes[first : first+2*n]
	kl := uint32(len(key))
	want := uint32(sig) << 16
	for i := 0; i < len(nodes); i += 2 {
		// Length first: one load, and most keys differ in it. A key
		// or a search of unknown signature (0) matches on length alone.
		k := &nodes[i]
		if uint32(k.u) != kl {
			continue
		}
		if s := k.h & 0xff0000; s != want && s != 0 && want != 0 {
			continue
		}
		if a.keyIs(k, key) {
			return first + i
		}
	}
	return -1
}

// findStep is find for key step s, trying first where its memo says the
// key was found last. That costs a load or two: the key's words, kept in
// the memo, against the words of the key found there, where a comparison
// of strings would call memequal.
func (a *Arena) findStep(m Value, s *Step) int {
	mo := s.memo
	if mo == nil {
		return a.find(m, s.key, s.sig)
	}
	if j := mo.pos; j < uint32(m.n()) {
		i := int(m.off()) + 2*int(j)
		// m's entries lie in a.nodes, and entry j is one of them.
		k := (*Value)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(a.nodes)), uintptr(i)*unsafe.Sizeof(Value{})))
		if uint32(k.u) == uint32(len(s.key)) && a.hintIs(k, s.key, mo) {
			return i
		}
	}
	return a.findAndNote(m, s, mo)
}

// findAndNote is find for key step s, noting where the key was in mo.
func (a *Arena) findAndNote(m Value, s *Step, mo *stepMemo) int {
	i := a.find(m, s.key, s.sig)
	if i >= 0 {
		mo.pos = uint32(i-int(m.off())) / 2
	}
	return i
}

// hintIs reports whether the string k, of len(key) bytes, is key, whose
// words mo keeps.
func (a *Arena) hintIs(k *Value, key string, mo *stepMemo) bool {
	buf := a.slab
	if k.ref != 0 {
		buf = a.bufs[k.ref-1]
	}
	off, n := int(k.off()), len(key)
	p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(buf)), off)
	switch {
	case n < 8 && off+8 <= len(buf):
		return word(p)&mo.mask == mo.w0
	case n >= 8 && n <= 16:
		// k's n bytes lie in buf.
		return word(p) == mo.w0 && word(unsafe.Add(p, n-8)) == mo.w1
	}
	return string(buf[off:off+n]) == key
}

// keyIs reports whether the string value k, of len(key) bytes, is key.
func (a *Arena) keyIs(k *Value, key string) bool {
	if len(key) == 0 {
		return true
	}
	off := int(k.off())
	var b []byte
	if k.ref == 0 {
		b = a.slab[off : off+len(key)]
	} else {
		b = a.bufs[k.ref-1][off : off+len(key)]
	}
	return string(b) == key
}

// Iter iterates over the entries of a map or the elements of an array, in
// order, without allocating:
//
//	for it := a.Iter(v); it.Next(); { use(it.Key(), it.Value()) }
//
// For arrays Key is the Int index.
type Iter struct {
	a     *Arena
	v     Value
	i     int
	key   Value
	value Value
}

// Iter returns an iterator over v (empty for non-containers).
func (a *Arena) Iter(v Value) Iter { return Iter{a: a, v: v, i: -1} }

// Next advances to the next entry and reports whether there is one.
func (it *Iter) Next() bool {
	it.i++
	if !it.v.isContainer() || it.i >= int(it.v.n()) {
		return false
	}
	if it.v.kind() == Map {
		j := int(it.v.off()) + 2*it.i
		it.key, it.value = it.a.nodes[j], it.a.nodes[j+1]
	} else {
		it.key, it.value = IntValue(int64(it.i)), it.a.nodes[int(it.v.off())+it.i]
	}
	return true
}

// Key returns the current key (a String) or array index (an Int).
func (it *Iter) Key() Value { return it.key }

// Value returns the current value.
func (it *Iter) Value() Value { return it.value }

// Index returns the position of the current entry.
func (it *Iter) Index() int { return it.i }
