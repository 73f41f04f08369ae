package record

// Split makes r into one record per element of arr, an array of r's
// arena (the value r holds at p), appending them to dst in order: r
// itself first, then new records of r's arena with r's tag, time,
// metadata and layout, each with its element at p and the rest of the
// root shared with r's. Each record is committed, so that a later
// Discard returns it to the state right after the split. An empty arr
// appends nothing and leaves r as it was.
//
// The backends run a policy's split P with it (docs/language.md,
// "split"): what comes before (reading p, the limit on elements) is
// theirs.
func (r *Record) Split(p Path, arr Value, dst []*Record) ([]*Record, error) {
	n := r.a.Len(arr)
	if n == 0 {
		return dst, nil
	}
	r.Commit()
	// A projection stands for the whole LogRecord only with its bytes,
	// which the new records do not have: they get the whole root.
	root := r.wholeRoot()
	for i := range n {
		el, _ := r.a.Index(arr, i)
		c := r
		if i > 0 {
			c = r.a.NewRecordLike(r)
			c.root, c.base = root, root
		}
		if err := c.Set(p, el); err != nil {
			r.Discard()
			return dst, err
		}
		c.Commit()
		dst = append(dst, c)
	}
	return dst, nil
}
