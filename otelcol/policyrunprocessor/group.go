package policyrunprocessor

import (
	"go.opentelemetry.io/collector/pdata/plog"
)

// Each record owns its resource and scope (docs/otlp.md): a policy's
// write to .resource or .scope changes that record's only, so the record
// moves to a group whose resource and scope are its new ones, and its
// siblings stay where they were. The batch makes each new group once:
// records that end with equal resources (and scopes) share one, whichever
// group they came from. New resource groups go at the end of the batch,
// new scope groups of an unchanged resource at the end of its group. A
// record moves as soon as its policies have run: the edits are in the
// arena of that record alone.

// newRL is a resource that records moved to: a group the batch made, or
// (canon < 0) the resource the records came with, which edits left equal.
type newRL struct {
	ri       int32 // the resource group the edits were made in
	from, to int32 // the edits, written out in batch.keys
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

// move puts the record of s, whose resource or scope b.leaves change, in
// its new group, and reports false when it stays (the edits left both as
// they were).
func (b *batch) move(ld plog.Logs, s src, ri, si int32) bool {
	mark := len(b.keys)
	rfrom, rto := b.key(inResource)
	sfrom, sto := b.key(inScope)
	key, target := -1-ri, s.rl
	if rto > rfrom {
		if key = b.resourceFor(ld.ResourceLogs(), s.rl, ri, rfrom, rto); key >= 0 {
			target = b.newRLs[key].rl
		}
	}
	sl, moved := b.scopeFor(target, key, s.sl, ri, si, sfrom, sto)
	if b.unkeyed(mark) {
		b.keys = b.keys[:mark] // no new group keeps them
	}
	if !moved {
		return false
	}
	s.lr.MoveTo(sl.LogRecords().AppendEmpty())
	return true
}

// key writes out the leaf edits of group g in b.keys, to compare the
// edits of records with: the field, the path inside it, the value's kind
// and its JSON.
func (b *batch) key(g group) (int32, int32) {
	from := len(b.keys)
	for i := range b.leaves {
		e := &b.leaves[i]
		if e.f.group() != g {
			continue
		}
		b.keys = append(b.keys, byte(e.f))
		for _, st := range e.rest {
			b.keys = append(b.keys, st.Key()...)
			b.keys = append(b.keys, 0)
		}
		b.keys = append(b.keys, 1, byte(e.v.Kind()))
		b.keys = b.a.AppendJSON(b.keys, e.v)
		b.keys = append(b.keys, 2)
	}
	return int32(from), int32(len(b.keys))
}

// unkeyed reports whether no entry refers to the keys from mark on.
func (b *batch) unkeyed(mark int) bool {
	if n := len(b.newRLs); n > 0 && int(b.newRLs[n-1].to) > mark {
		return false
	}
	if n := len(b.newSLs); n > 0 && int(b.newSLs[n-1].to) > mark {
		return false
	}
	return true
}

// edits applies the leaf edits of group g to d.
func (b *batch) edits(d dst, g group) {
	for i := range b.leaves {
		if e := &b.leaves[i]; e.f.group() == g {
			b.w.apply(d, e)
		}
	}
}

func (b *batch) keyIs(from, to, kfrom, kto int32) bool {
	return string(b.keys[from:to]) == string(b.keys[kfrom:kto])
}

// resourceFor returns the index in newRLs of the resource group the
// record goes to, or -1-ri when its resource is as it was.
func (b *batch) resourceFor(rls plog.ResourceLogsSlice, orl plog.ResourceLogs, ri, from, to int32) int32 {
	for j := range b.newRLs {
		if n := &b.newRLs[j]; n.ri == ri && b.keyIs(n.from, n.to, from, to) {
			return n.canon
		}
	}
	// New edits: make the resource they give, then look for it.
	cand := plog.NewResourceLogs()
	orl.Resource().CopyTo(cand.Resource())
	cand.SetSchemaUrl(orl.SchemaUrl())
	b.edits(dst{rl: cand}, inResource)
	entry := newRL{ri: ri, from: from, to: to, canon: -1 - ri}
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
// key rl) that the record goes to, and false when it stays where it is
// (neither its resource nor its scope changed).
func (b *batch) scopeFor(target plog.ResourceLogs, rl int32, osl plog.ScopeLogs, ri, si, from, to int32) (plog.ScopeLogs, bool) {
	stays := rl < 0 // its resource group is the one it came in
	for k := range b.newSLs {
		n := &b.newSLs[k]
		if n.rl == rl && n.ri == ri && n.si == si && b.keyIs(n.from, n.to, from, to) {
			if n.same {
				return plog.ScopeLogs{}, false
			}
			return b.newSLs[n.canon].sl, true
		}
	}
	if stays && to == from {
		return plog.ScopeLogs{}, false
	}
	cand := plog.NewScopeLogs()
	osl.Scope().CopyTo(cand.Scope())
	cand.SetSchemaUrl(osl.SchemaUrl())
	b.edits(dst{sl: cand}, inScope)
	entry := newSL{rl: rl, ri: ri, si: si, from: from, to: to}
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
