package vm

import (
	"slices"
	"strings"

	"github.com/policyrun/policyrun/record"
)

// Access is what a run of a program may read and write, known when it is
// compiled (docs/vm.md, "Access sets"). An embedder that holds its records
// in another form (pdata in the Collector) uses it to convert only part of
// each: it builds a record of the values under Reads and Writes, runs the
// program over it, and copies back only what lies under Writes.
//
// Paths are made of map keys only: a path is cut before its first step that
// is not a constant key (a computed key or any array index), and the value
// there is read or written whole. The empty path is the whole record. Both
// lists are sorted and minimal: no path lies under another of its list.
type Access struct {
	// Reads are the paths a run may read, each with everything under it.
	Reads []record.Path
	// Writes are the paths a run may set or remove, or change something
	// under.
	Writes []record.Path
	// ReadsTime and ReadsTag say whether a run may read %time and %tag.
	ReadsTime, ReadsTag bool
	// SetsTime and SetsTag say whether a run may set %time and %tag.
	SetsTime, SetsTag bool
}

// AccessAll is the Access of a program whose access is not known: the
// whole record, its time and its tag, read and written.
func AccessAll() Access {
	return Access{Reads: []record.Path{{}}, Writes: []record.Path{{}},
		ReadsTime: true, ReadsTag: true, SetsTime: true, SetsTag: true}
}

// Access returns what a run of the program may read and write. A Program
// built from a Code without an Access (Code.Access nil) reports AccessAll.
// The slices are the caller's.
func (p *Program) Access() Access {
	a := p.access
	a.Reads = slices.Clone(a.Reads)
	a.Writes = slices.Clone(a.Writes)
	return a
}

// normalized returns a with every path cut before its first index step
// and each list sorted and minimal; it does not change a's slices.
func (a Access) normalized() Access {
	a.Reads = minimalPaths(a.Reads)
	a.Writes = minimalPaths(a.Writes)
	return a
}

// minimalPaths returns the paths of ps, each cut before its first index
// step, without those that lie under another (or equal one): sorted by
// key, with a path before the paths under it. It does not change ps.
func minimalPaths(ps []record.Path) []record.Path {
	out := make([]record.Path, 0, len(ps))
	for _, p := range ps {
		for i, s := range p {
			if s.IsIndex() {
				p = p[:i]
				break
			}
		}
		out = append(out, p[:len(p):len(p)])
	}
	slices.SortFunc(out, comparePaths)
	kept := out[:0]
	for _, p := range out {
		if n := len(kept); n > 0 && covers(kept[n-1], p) {
			continue
		}
		kept = append(kept, p)
	}
	return slices.Clip(kept)
}

// comparePaths orders key paths step by step, a path before the longer
// paths it begins.
func comparePaths(p, q record.Path) int {
	for i := 0; i < len(p) && i < len(q); i++ {
		if c := strings.Compare(p[i].Key(), q[i].Key()); c != 0 {
			return c
		}
	}
	return len(p) - len(q)
}

// covers reports whether the path p is q or one of q's prefixes: a read
// or write of p whole takes in q.
func covers(p, q record.Path) bool {
	return len(p) <= len(q) && p.Equal(q[:len(p)])
}

// appendAccess writes the disassembly's lines for a: the paths read, with
// %time and %tag, and those written.
func appendAccess(b *strings.Builder, a *Access) {
	line := func(head string, ps []record.Path, time, tag bool) {
		b.WriteString(head)
		n := 0
		sep := func() {
			if n > 0 {
				b.WriteString(", ")
			}
			n++
		}
		for _, p := range ps {
			sep()
			b.WriteString(p.String())
		}
		if time {
			sep()
			b.WriteString("%time")
		}
		if tag {
			sep()
			b.WriteString("%tag")
		}
		if n == 0 {
			b.WriteString("nothing")
		}
		b.WriteByte('\n')
	}
	line("reads:  ", a.Reads, a.ReadsTime, a.ReadsTag)
	line("writes: ", a.Writes, a.SetsTime, a.SetsTag)
}
