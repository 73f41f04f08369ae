package record

// occurrences collects where a singular message field occurs: once in the
// common case; more than once, protobuf merges the occurrences, which is
// what parsing their concatenation gives.
type occurrences struct {
	s, e, n int
	// all ranges, kept only once there are two
	more [][2]int
}

func (o *occurrences) add(s, e int) {
	if o.n == 1 {
		o.more = append(o.more, [2]int{o.s, o.e})
	}
	if o.n >= 1 {
		o.more = append(o.more, [2]int{s, e})
	}
	o.s, o.e = s, e
	o.n++
}

// reset forgets the occurrences (a oneof member replaced by another).
func (o *occurrences) reset() { *o = occurrences{} }

// origin maps an error of the decoder that view returned for o back to
// the offset in d's input: the merged occurrences are a buffer of their
// own, whose offsets are not the request's.
func (o *occurrences) origin(err error) error {
	de, ok := err.(*DecodeError)
	if o.n <= 1 || !ok {
		return err
	}
	at := 0 // where occurrence k starts in the merged buffer
	for k, r := range o.more {
		n := r[1] - r[0]
		if de.Offset < at+n || k == len(o.more)-1 {
			de.Offset += r[0] - at
			break
		}
		at += n
	}
	return err
}

// view returns a decoder and the range that hold the merged occurrences:
// d itself when there was one, else a new buffer with their concatenation.
// Each occurrence must be a message on its own: its fields end where it
// ends (a concatenation could join two halves of a field).
func (d *otlpDecoder) view(o *occurrences) (*otlpDecoder, int, int, error) {
	if o.n <= 1 {
		return d, o.s, o.e, nil
	}
	d.dirty = true
	w := d.w
	var buf []byte
	for _, r := range o.more {
		for i := r[0]; i < r[1]; {
			_, wt, j, err := w.tag(i, r[1])
			if err != nil {
				return nil, 0, 0, err
			}
			if i, err = w.skip(wt, i, j, r[1]); err != nil {
				return nil, 0, 0, err
			}
		}
		buf = append(buf, w.b[r[0]:r[1]]...)
	}
	sub := *d
	sub.w = wire{buf}
	sub.ref, sub.base = d.a.addBuf(buf), 0
	return &sub, 0, len(buf), nil
}
