package lua

// policyrun patch: memory accounting. gopher-lua has no allocator hook, and
// a script can ask for gigabytes in one instruction (s .. s) or one library
// call (s:gsub("x", s)), so the VM and the string and table libraries
// charge what they are about to allocate for strings, tables and closures
// to the LState. When the charges pass the budget, the hook decides: it can
// measure what the state really holds and set a new budget, or raise an
// error before anything is allocated. See POLICYRUN.md.

import (
	"math"
	"strings"
	"sync/atomic"
)

// Sizes charged for the VM's allocations, near what Go's heap really
// spends (measured with runtime.MemStats over a million of each): a table
// that the VM allocates with its maps and slices; an entry, between an
// array slot (16 bytes, doubled as the slice grows, and 8 for a number's
// box) and a string key's (a slot in strdict, in k2i and in keys, and the
// key's box: about 160); a closure. The hook measures what is really held;
// charges only say when to measure, and one far below the truth lets a
// script allocate many times its budget between two measurements.
const (
	memTable      = 128
	memTableEntry = 96
	memFunction   = 96
)

// Mark marks the table for a walk of what a state holds and reports
// whether it was marked already: a walker takes a generation no other walk
// uses (NewMarkGeneration) and needs no set of its own of what it has
// seen, which for a state of a million tables would take tens of
// megabytes itself.
func (tb *LTable) Mark(gen uint32) (seen bool) {
	seen, tb.mark = tb.mark == gen, gen
	return seen
}

// Mark is LTable.Mark for a function.
func (fn *LFunction) Mark(gen uint32) (seen bool) {
	seen, fn.mark = fn.mark == gen, gen
	return seen
}

// Mark is LTable.Mark for a userdata.
func (ud *LUserData) Mark(gen uint32) (seen bool) {
	seen, ud.mark = ud.mark == gen, gen
	return seen
}

// HeldLen is the number of places HeldAt reads: the array's slots, then
// the keys of the hash part.
func (tb *LTable) HeldLen() int { return len(tb.array) + len(tb.keys) }

// HeldAt returns the i-th entry of the table for a walk of a state's
// memory: a nil key for an array slot, and LNil for a value that was
// deleted. A walk that keeps its place in each table by index holds one
// position per table it is inside, where a queue of every table's entries
// would hold (and, growing, allocate several times) as many entries as the
// largest table.
func (tb *LTable) HeldAt(i int) (key, value LValue) {
	if i < len(tb.array) {
		return nil, tb.array[i]
	}
	key = tb.keys[i-len(tb.array)]
	return key, tb.RawGetH(key)
}

var markGeneration atomic.Uint32

// NewMarkGeneration returns a generation for Mark that no walk since the
// process started has used (but for the 0 a new value holds, and after 2³²
// walks).
func NewMarkGeneration() uint32 {
	for {
		if g := markGeneration.Add(1); g != 0 {
			return g
		}
	}
}

// MemSize estimates the bytes the table's own storage takes on Go's heap:
// its header, its array and key slices by capacity, and its maps by
// length (a slot and a control byte an entry, up to twice that after a
// map doubles). The values it holds are not included.
func (tb *LTable) MemSize() int {
	n := memTable + 16*cap(tb.array) + 16*cap(tb.keys)
	n += mapSize(len(tb.strdict), 32) + mapSize(len(tb.dict), 32) + mapSize(len(tb.k2i), 24)
	return n
}

func mapSize(n, slot int) int { return n * (slot + 1) * 2 }

// SetMemoryHook makes the LState count the bytes the VM and the string and
// table libraries are about to allocate. When the count passes budget,
// hook is called with the size of the pending allocation; it must either
// raise an error (L.RaiseError), which stops the allocation, or set a new
// budget with SetMemoryBudget. A nil hook turns the counting off.
func (ls *LState) SetMemoryHook(budget int64, hook func(L *LState, n int)) {
	ls.memHook = hook
	if hook == nil {
		budget = math.MaxInt64
	}
	ls.memLeft = budget
}

// SetMemoryBudget sets how many more bytes may be charged before the hook
// is called again.
func (ls *LState) SetMemoryBudget(budget int64) { ls.memLeft = budget }

// ChargeMemory charges n bytes, as the libraries do, for Go functions that
// make large values.
func (ls *LState) ChargeMemory(n int) { ls.chargeMem(n) }

func (ls *LState) chargeMem(n int) {
	ls.memLeft -= int64(n)
	if ls.memLeft < 0 {
		ls.memExceeded(n)
	}
}

func (ls *LState) memExceeded(n int) {
	if ls.memHook == nil {
		ls.memLeft = math.MaxInt64
		return
	}
	ls.memHook(ls, int(min(int64(n)+ls.memHeld, math.MaxInt32)))
}

// holdMem charges n bytes that the library call in progress keeps where
// the hook cannot see them (a match list, the pieces of a gsub): the hook
// is told about them with every pending allocation until the call ends
// and releaseHeld puts the count back.
func (ls *LState) holdMem(n int) {
	ls.memHeld += int64(n)
	ls.chargeMem(n)
}

func (ls *LState) releaseHeld(held int64) { ls.memHeld = held }

// MemoryHeld returns the bytes held by the library call in progress.
func (ls *LState) MemoryHeld() int64 { return ls.memHeld }

// UserDataSize returns the bytes the library keeps in a userdata it made
// (the matches of a string.gmatch iterator), 0 for any other.
func UserDataSize(ud *LUserData) int {
	if md, ok := ud.Value.(*strMatchData); ok {
		n := 0
		for _, m := range md.matches[md.pos:] {
			n += matchSize(m.CaptureLength())
		}
		return n
	}
	return 0
}

func matchSize(captures int) int { return 48 + 4*captures }

// chargeMul charges a*b bytes, saturating.
func (ls *LState) chargeMul(a, b int) {
	if a > 0 && b > 0 && a > math.MaxInt32/b {
		ls.chargeMem(math.MaxInt32)
		return
	}
	ls.chargeMem(a * b)
}

// matchCharger returns the charge of a pattern search's matches, or nil
// when nothing is counted.
func (ls *LState) matchCharger() func(int) {
	if ls.memHook == nil {
		return nil
	}
	return func(captures int) { ls.holdMem(matchSize(captures)) }
}

// chargeStrings charges the concatenation of parts.
func chargeStrings(L *LState, parts []string) {
	n := 0
	for _, s := range parts {
		n += len(s)
	}
	L.chargeMem(n)
}

// chargeFormat charges string.format's result: the format, the strings of
// its arguments (four times: %q escapes a byte as \ddd) and every width and
// precision written in the format (fmt caps each at a million).
func chargeFormat(L *LState, format string, args []interface{}) {
	n := len(format)
	for _, a := range args {
		if s, ok := a.(LString); ok {
			n += 4 * len(s)
		} else {
			n += 32
		}
	}
	for i := strings.IndexByte(format, '%'); i >= 0 && i < len(format); {
		i++
		for i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0 {
			i++
		}
		for w := 0; ; {
			for i < len(format) && format[i] >= '0' && format[i] <= '9' && w < 1e7 {
				w = w*10 + int(format[i]-'0')
				i++
			}
			n += w
			if i >= len(format) || format[i] != '.' {
				break
			}
			i, w = i+1, 0
		}
		j := strings.IndexByte(format[i:], '%')
		if j < 0 {
			break
		}
		i += j
	}
	L.chargeMem(n)
}

// ForEachStackValue calls f with every value the LState's stack holds: the
// registers of every frame in progress and the functions they run.
// Together with the globals and the registry (G.Global, G.Registry) they
// are the roots of what a script can reach.
func (ls *LState) ForEachStackValue(f func(LValue)) {
	for i := 0; i < ls.reg.top && i < len(ls.reg.array); i++ {
		if v := ls.reg.array[i]; v != nil {
			f(v)
		}
	}
	for i := 0; i < ls.stack.Sp(); i++ {
		if fn := ls.stack.At(i).Fn; fn != nil {
			f(fn)
		}
	}
}

// chargeTableSet charges a store into t: an entry, and when t's array is
// full the array it may double into, since an append that doubles a
// large array allocates the whole of it at once.
func (ls *LState) chargeTableSet(t LValue) {
	n := memTableEntry
	if tb, ok := t.(*LTable); ok && len(tb.array) == cap(tb.array) {
		n += 16 * cap(tb.array)
	}
	ls.chargeMem(n)
}
