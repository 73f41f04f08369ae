package record

// copyValue copies v, a value of arena src, into a (strings into a's slab),
// so that it outlives src's next Reset; for buffers that keep records
// across batches.
func (a *Arena) copyValue(src *Arena, v Value) Value {
	switch v.kind() {
	case String, Bytes:
		c := a.NewString(src.raw(v))
		c.h = v.h &^ (flagWritable | flagQuoted | flagFramed) // its bytes alone are copied
		return c
	case Array, Map:
		w, n := width(v.kind()), int(v.n())
		first := a.alloc(w * n)
		for i := 0; i < w*n; i++ {
			a.nodes[first+i] = a.copyValue(src, src.nodes[int(v.off())+i])
		}
		return containerValue(v.kind(), uint32(first), uint32(n))
	}
	v.h, v.ref = uint32(v.kind()), 0
	return v
}

// NewRecordLike returns a new record of a with r's tag, time, and (for a
// Fluent Bit event) metadata and msgpack layout, and an empty map at the
// root: a record that r is split into, written out as r would be.
func (a *Arena) NewRecordLike(r *Record) *Record {
	c := a.NewRecord()
	tag, meta := r.tag, r.meta()
	if r.a != a {
		if tag.kind() == String {
			tag = a.copyValue(r.a, tag)
		}
		if meta.kind() == Map {
			meta = a.copyValue(r.a, meta)
		}
	}
	c.tag, c.baseTag = tag, tag
	c.time, c.baseTime = r.time, r.time
	c.layout, c.timeFmt = r.layout, r.timeFmt
	if meta.kind() == Map {
		c.newText().meta = meta
	}
	return c
}
