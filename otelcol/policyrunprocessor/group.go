package policyrunprocessor

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/policyrun/policyrun/record"
)

// Each record owns its resource and scope (docs/otlp.md, §1): a policy's
// write to .resource or .scope changes that record's only, so the record
// moves to a group whose resource and scope are its new ones, and its
// siblings stay where they were. The batch makes each new group once:
// records that end with equal resources (and scopes) share one, whichever
// group they came from. New resource groups go at the end of the batch,
// new scope groups of an unchanged resource at the end of its group.

// move is a record whose resource or scope a policy changed.
type move struct {
	ri, si, g int32 // its groups and its index in the batch
	lr        plog.LogRecord
	// The resource's leaf edits are moveLeaves[from:res], the scope's
	// moveLeaves[res:to].
	from, res, to int32
}

// newRL is a resource that records moved to: a group the batch made, or
// (canon < 0) the resource the records came with, which edits left equal.
type newRL struct {
	ri       int32 // the resource group the edits were made in
	from, to int32 // the edits, in moveLeaves
	// canon is the index in newRLs of the group records with these edits
	// go to (its own for the first), or -1-ri for their own group.
	canon int32
	rl    plog.ResourceLogs
}

// newSL is a scope that records moved to: a group the batch made in the
// resource group rl (an index in newRLs, or -1-ri for a group that came
// in), or (same) the scope the records came with.
type newSL struct {
	rl       int32
	ri, si   int32 // the scope group the edits were made in
	from, to int32
	same     bool
	canon    int32 // the index in newSLs of the group records go to
	sl       plog.ScopeLogs
}

// move puts every record of b.moves in its new group, and marks its old
// place for remove.
func (b *batch) move(ld plog.Logs) {
	rls := ld.ResourceLogs()
	for i := range b.moves {
		m := &b.moves[i]
		orl := rls.At(int(m.ri))
		osl := orl.ScopeLogs().At(int(m.si))
		key, target := -1-m.ri, orl
		if m.res > m.from {
			if key = b.resourceFor(rls, m, orl); key >= 0 {
				target = b.newRLs[key].rl
			}
		}
		sl, moved := b.scopeFor(target, key, m, osl)
		if !moved {
			continue // the edits left resource and scope as they were
		}
		m.lr.MoveTo(sl.LogRecords().AppendEmpty())
		b.rm = append(b.rm, m.g)
	}
}

// resourceFor returns the index in newRLs of the resource group the
// record of m goes to, or -1-ri when its resource is as it was.
func (b *batch) resourceFor(rls plog.ResourceLogsSlice, m *move, orl plog.ResourceLogs) int32 {
	edits := b.moveLeaves[m.from:m.res]
	for j := range b.newRLs {
		if n := &b.newRLs[j]; n.ri == m.ri && b.leavesEqual(b.moveLeaves[n.from:n.to], edits) {
			return n.canon
		}
	}
	// New edits: make the resource they give, then look for it.
	cand := plog.NewResourceLogs()
	orl.Resource().CopyTo(cand.Resource())
	cand.SetSchemaUrl(orl.SchemaUrl())
	d := dst{rl: cand}
	for k := range edits {
		b.w.apply(d, &edits[k])
	}
	entry := newRL{ri: m.ri, from: m.from, to: m.res, canon: -1 - m.ri}
	switch j := b.findResource(cand); {
	case resourceEqual(cand, orl):
	case j >= 0:
		entry.canon = j
	default:
		entry.canon = int32(len(b.newRLs))
		entry.rl = rls.AppendEmpty()
		cand.MoveTo(entry.rl)
	}
	b.newRLs = append(b.newRLs, entry)
	return entry.canon
}

func (b *batch) findResource(rl plog.ResourceLogs) int32 {
	for j := range b.newRLs {
		if n := &b.newRLs[j]; n.canon == int32(j) && resourceEqual(n.rl, rl) {
			return int32(j)
		}
	}
	return -1
}

// scopeFor returns the scope group in target (the resource group with
// key rl) that the record of m goes to, and false when it stays where it
// is (neither its resource nor its scope changed).
func (b *batch) scopeFor(target plog.ResourceLogs, rl int32, m *move, osl plog.ScopeLogs) (plog.ScopeLogs, bool) {
	edits := b.moveLeaves[m.res:m.to]
	stays := rl < 0 // its resource group is the one it came in
	for k := range b.newSLs {
		n := &b.newSLs[k]
		if n.rl == rl && n.ri == m.ri && n.si == m.si && b.leavesEqual(b.moveLeaves[n.from:n.to], edits) {
			if n.same {
				return plog.ScopeLogs{}, false
			}
			return b.newSLs[n.canon].sl, true
		}
	}
	if stays && len(edits) == 0 {
		return plog.ScopeLogs{}, false
	}
	cand := plog.NewScopeLogs()
	osl.Scope().CopyTo(cand.Scope())
	cand.SetSchemaUrl(osl.SchemaUrl())
	d := dst{sl: cand}
	for k := range edits {
		b.w.apply(d, &edits[k])
	}
	entry := newSL{rl: rl, ri: m.ri, si: m.si, from: m.res, to: m.to}
	if stays && scopeEqual(cand, osl) {
		entry.same = true
		b.newSLs = append(b.newSLs, entry)
		return plog.ScopeLogs{}, false
	}
	entry.canon = int32(len(b.newSLs))
	for k := range b.newSLs {
		if n := &b.newSLs[k]; n.rl == rl && !n.same && n.canon == int32(k) && scopeEqual(n.sl, cand) {
			entry.canon = int32(k)
			break
		}
	}
	if entry.canon == int32(len(b.newSLs)) {
		entry.sl = target.ScopeLogs().AppendEmpty()
		cand.MoveTo(entry.sl)
	}
	b.newSLs = append(b.newSLs, entry)
	return b.newSLs[entry.canon].sl, true
}

// leavesEqual reports whether two lists of leaf edits are the same edits.
func (b *batch) leavesEqual(x, y []leafEdit) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].f != y[i].f || !x[i].rest.Equal(y[i].rest) || !record.ValueEqual(b.a, x[i].v, b.a, y[i].v) {
			return false
		}
	}
	return true
}

// resourceEqual and scopeEqual compare what the view holds of a resource
// and a scope (attributes in any order).
func resourceEqual(x, y plog.ResourceLogs) bool {
	return x.SchemaUrl() == y.SchemaUrl() &&
		x.Resource().DroppedAttributesCount() == y.Resource().DroppedAttributesCount() &&
		x.Resource().Attributes().Equal(y.Resource().Attributes())
}

func scopeEqual(x, y plog.ScopeLogs) bool {
	xs, ys := x.Scope(), y.Scope()
	return x.SchemaUrl() == y.SchemaUrl() && xs.Name() == ys.Name() && xs.Version() == ys.Version() &&
		xs.DroppedAttributesCount() == ys.DroppedAttributesCount() &&
		xs.Attributes().Equal(ys.Attributes())
}
