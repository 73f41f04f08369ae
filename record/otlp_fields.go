package record

// A decode of part of each LogRecord: a caller that knows which keys of
// the view its programs read and write (vm.Access) builds only those, and
// checks the rest of the request as DecodeOTLP does, so that a request
// that does not decode is refused all the same, with the same error.

// OTLPFields is a set of the keys of an OTLP record's root view: bit i is
// OTLPView()[i].
type OTLPFields uint32

// OTLPAllFields is every key of the view: what DecodeOTLP builds.
const OTLPAllFields OTLPFields = 1<<numRootFields - 1

// OTLPFieldsOf returns the keys of the view that hold the paths: a path's
// first key, or every key for the empty path (the whole record) or one
// that starts with an index. A key the view does not have adds nothing: a
// record decoded without it reads it as missing, as a whole one does.
func OTLPFieldsOf(paths []Path) OTLPFields {
	var f OTLPFields
	for _, p := range paths {
		if len(p) == 0 || p[0].isIndex {
			return OTLPAllFields
		}
		if vf := viewField(rootView, p[0].key); vf != nil {
			f |= 1 << vf.ID
		}
	}
	return f
}

// OTLPProjection says what of each record DecodeOTLPProjection builds.
type OTLPProjection struct {
	// Fields are the keys of the root view built whole.
	Fields OTLPFields
	// Attributes, when not nil and the attributes are not among Fields,
	// are keys of .attributes built alone: the record's attributes map
	// holds those of them the LogRecord has, the others are checked.
	Attributes []string
	// Wire: the records are to be encoded as OTLP protobuf (an otlp
	// output, a filesystem buffer). Each stands on its LogRecord's bytes,
	// which an encoder copies, adding the attributes the edits added, or
	// decodes whole when the edits did more (docs/otlp.md, Projections);
	// a LogRecord whose bytes do not say its view again (a field skipped,
	// a key twice) is built whole.
	Wire bool
}

// OTLPProjectionOf returns the projection on paths (docs/vm.md, "Access
// sets"): the keys of the view that hold them (OTLPFieldsOf), but for a
// path that goes into .attributes by a key (.attributes."k8s.pod.name"),
// which adds that attribute alone.
func OTLPProjectionOf(paths []Path) OTLPProjection {
	var p OTLPProjection
	for _, path := range paths {
		if len(path) >= 2 && !path[0].isIndex && path[0].key == rootView[ViewAttributes].Name && !path[1].isIndex {
			p.Attributes = append(p.Attributes, path[1].key)
			continue
		}
		p.Fields |= OTLPFieldsOf([]Path{path})
	}
	if p.Fields&(1<<ViewAttributes) != 0 {
		p.Attributes = nil
	}
	return p
}

// DecodeOTLPProjection is DecodeOTLPFields with p.Fields, and with the
// attributes of p.Attributes when the attributes are not among p.Fields.
func (a *Arena) DecodeOTLPProjection(req []byte, mode Mode, dst []*Record, p OTLPProjection) ([]*Record, error) {
	return a.decodeOTLPProjection(req, mode, dst, &p)
}

// DecodeOTLPFields decodes a request as DecodeOTLP does, but the root of
// each record holds only the keys of keep (in the view's order): a
// projection (docs/vm.md, "Access sets"), as Arena.NewOTLPRecordOf makes
// one. The time is the record's, as always. Every other field is still
// checked (wire types, lengths, UTF-8, ids, depth): the error, if any, is
// DecodeOTLP's. A record that lacks keys has no wire bytes to stand for
// it: an encoder would write the projection, so the caller must not
// encode it; with keep OTLPAllFields this is DecodeOTLP.
func (a *Arena) DecodeOTLPFields(req []byte, mode Mode, dst []*Record, keep OTLPFields) ([]*Record, error) {
	return a.decodeOTLPProjection(req, mode, dst, &OTLPProjection{Fields: keep})
}

// projectedRoot is the root of a projection: the keys built, in the
// view's order, from the bits of d.built (the body when there is one).
func (d *otlpDecoder) projectedRoot(vals *[numRootFields]Value) Value {
	has := d.built
	if vals[ViewBody].kind() == Absent {
		has &^= 1 << ViewBody
	}
	return d.a.viewGroup(rootKeys[:], vals[:], has, d.kref)
}

// The checks below stand for the decoders of otlp_decode_value.go where a
// value is not built. Each answers true only for what the decoder would
// take, in the common layouts; anything else (a field sent twice, another
// oneof member, unknown fields, long lengths, an error) answers false, and
// the caller runs the decoder itself over the range and drops what it
// built (checkedValue, checkedKeyValue): its error is the error.

// checkAnyValue: anyValue at [s, e) with depth would succeed.
func (d *otlpDecoder) checkAnyValue(s, e, depth int) bool {
	b := d.w.b
	if s == e {
		return true // null
	}
	if e-s < 2 {
		return false
	}
	switch b[s] {
	case avString<<3 | wireBytes:
		n := int(b[s+1])
		return n < 0x80 && s+2+n == e && validUTF8(b[s+2:e])
	case avInt<<3 | wireVarint, avBool<<3 | wireVarint:
		_, j, err := d.w.varint(s+1, e)
		return err == nil && j == e
	case avDouble<<3 | wireFixed64:
		return e-s == 9
	case avBytes<<3 | wireBytes:
		_, fe, err := d.w.bytesField(s+1, e)
		return err == nil && fe == e
	case avArray<<3 | wireBytes, avKvlist<<3 | wireBytes:
		if depth > d.maxDepth {
			return false
		}
		fs, fe, err := d.w.bytesField(s+1, e)
		if err != nil || fe != e {
			return false
		}
		if b[s] == avKvlist<<3|wireBytes {
			return d.checkKVList(fs, fe, depth)
		}
		return d.checkArray(fs, fe, depth)
	}
	return false
}

func (d *otlpDecoder) checkKVList(s, e, depth int) bool {
	b := d.w.b
	var dups keyDups
	for i := s; i < e; {
		if b[i] != listValues<<3|wireBytes {
			return false
		}
		j := i + 1 // bytesField by hand
		if j >= e || b[j] >= 0x80 || int(b[j]) >= e-j {
			return false
		}
		fs, fe := j+1, j+1+int(b[j])
		if !d.quickKeyValue(fs, fe, false) && !d.checkKeyValue(fs, fe, depth+1) {
			return false
		}
		if d.wire { // the checks passed: a one-byte key length, or no key
			if fe > fs {
				dups.add(b, fs+2, int(b[fs+1]))
			} else {
				dups.add(b, fs, 0)
			}
		}
		i = fe
	}
	// A key twice: the decoder drops one, and says so (dirty).
	return !d.wire || !dups.dup(b)
}

func (d *otlpDecoder) checkArray(s, e, depth int) bool {
	b := d.w.b
	for i := s; i < e; {
		if b[i] != listValues<<3|wireBytes {
			return false
		}
		fs, fe, err := d.w.bytesField(i+1, e)
		if err != nil || !d.checkAnyValue(fs, fe, depth+1) {
			return false
		}
		i = fe
	}
	return true
}

// quickKeyValue is checkKeyValue for the commonest layout, in one
// function: a key and a scalar value (string, int, bool or double), each
// with a one-byte length; false for anything else, and, when filter is
// set, for a key of d.attrKeys (which is built).
func (d *otlpDecoder) quickKeyValue(s, e int, filter bool) bool {
	kv := d.w.b[s:e] // offsets from here on are kv's: fewer bounds checks
	n := len(kv)
	if n < 6 || kv[0] != kvKey<<3|wireBytes || kv[1] >= 0x80 {
		return false
	}
	ke := 2 + int(kv[1])
	if ke+4 > n || kv[ke] != kvValue<<3|wireBytes || kv[ke+1] >= 0x80 || ke+2+int(kv[ke+1]) != n {
		return false
	}
	key := kv[2:ke]
	if filter && d.wantAttr(key) {
		return false
	}
	v := kv[ke+2:] // the AnyValue, 2 bytes or more
	switch v[0] {
	case avString<<3 | wireBytes:
		// The string and the key at once (checkKeyValue says why).
		return int(v[1]) == len(v)-2 && validUTF8(kv)
	case avBool<<3 | wireVarint, avInt<<3 | wireVarint:
		// A varint that ends with v, of 9 bytes at most (a tenth may
		// overflow).
		u := v[1:]
		if len(u) > 9 || u[len(u)-1] >= 0x80 {
			return false
		}
		for _, c := range u[:len(u)-1] {
			if c < 0x80 {
				return false
			}
		}
	case avDouble<<3 | wireFixed64:
		if len(v) != 9 {
			return false
		}
	default:
		return false
	}
	return validUTF8(key)
}

// checkKeyValue: keyValue at [s, e) with depth would succeed.
func (d *otlpDecoder) checkKeyValue(s, e, depth int) bool {
	b := d.w.b
	if s == e {
		return true // "": null
	}
	if e-s < 2 || b[s] != kvKey<<3|wireBytes || b[s+1] >= 0x80 {
		return false
	}
	ke := s + 2 + int(b[s+1])
	if ke == e {
		return validUTF8(b[s+2 : ke]) // no value: null
	}
	if ke+2 > e || b[ke] != kvValue<<3|wireBytes || b[ke+1] >= 0x80 || ke+2+int(b[ke+1]) != e {
		return false
	}
	// A string value: the key, the string and the tags and lengths
	// between them (all below 0x80, so neither joins nor ends a UTF-8
	// sequence) are valid UTF-8 together when the two are apart, so one
	// look does for both.
	if vs := ke + 2; e-vs >= 2 && b[vs] == avString<<3|wireBytes && b[vs+1] < 0x80 && vs+2+int(b[vs+1]) == e {
		return validUTF8(b[s:e])
	}
	return validUTF8(b[s+2:ke]) && d.checkAnyValue(ke+2, e, depth)
}

// checkedKeyValue checks the KeyValue at [s, e), decoding it (and then
// dropping what it built) when checkKeyValue cannot tell.
func (d *otlpDecoder) checkedKeyValue(s, e, depth int) error {
	if d.checkKeyValue(s, e, depth) {
		return nil
	}
	m := d.a.mark()
	_, _, err := d.keyValue(s, e, depth)
	d.a.rollback(m)
	return err
}

// checkedValue checks the AnyValue of the occurrences o (the body) as
// checkedKeyValue does a KeyValue.
func (d *otlpDecoder) checkedValue(o *occurrences, depth int) error {
	if o.n == 1 && d.checkAnyValue(o.s, o.e, depth) {
		return nil
	}
	m := d.a.mark()
	vd, vs, ve, err := d.view(o)
	if err == nil {
		_, err = vd.anyValue(vs, ve, depth)
		err = o.origin(err)
	}
	d.a.rollback(m)
	return err
}

// checkAttributes checks the attribute whose length is at j, and the
// attributes that follow it (they come one after another: a loop of their
// own spares each the LogRecord's dispatch), building those of
// d.attrKeys; it returns where the last ends.
func (d *otlpDecoder) checkAttributes(j, e int) (int, error) {
	b := d.w.b
	for {
		var fs, fe int
		var err error
		if j < e && b[j] < 0x80 && int(b[j]) < e-j { // bytesField by hand
			fs, fe = j+1, j+1+int(b[j])
		} else if fs, fe, err = d.w.bytesFieldLong(j, e); err != nil {
			return j, err
		}
		if !d.quickKeyValue(fs, fe, d.someAttrs) {
			if d.someAttrs {
				err = d.someAttribute(fs, fe)
			} else {
				err = d.checkedKeyValue(fs, fe, 3)
			}
			if err != nil {
				return j, err
			}
		}
		if d.wire {
			// Keys sent twice: the whole decode would drop one (logRecord
			// asks d.attrDups once the LogRecord is read).
			switch {
			case fe == fs:
				d.attrDups.add(b, fs, 0)
			case b[fs] == kvKey<<3|wireBytes && b[fs+1] < 0x80 && fs+2+int(b[fs+1]) <= fe:
				d.attrDups.add(b, fs+2, int(b[fs+1]))
			default:
				d.dirty = true // a layout the decoder read: no quick look at its key
			}
		}
		if fe >= e || b[fe] != lrAttributes<<3|wireBytes {
			return fe, nil
		}
		j = fe + 1
	}
}

// someAttribute decodes the attribute at [s, e) onto the scratch when its
// key is one of d.attrKeys, and checks it else.
func (d *otlpDecoder) someAttribute(s, e int) error {
	b := d.w.b
	if e-s >= 2 && b[s] == kvKey<<3|wireBytes && b[s+1] < 0x80 && s+2+int(b[s+1]) <= e {
		if key := b[s+2 : s+2+int(b[s+1])]; !d.wantAttr(key) {
			return d.checkedKeyValue(s, e, 3)
		}
	}
	// One of the keys, or a layout that does not say which key.
	m := d.a.mark()
	k, v, err := d.keyValue(s, e, 3)
	if err != nil {
		return err
	}
	if !d.wantAttr(d.a.raw(k)) {
		d.a.rollback(m)
		return nil
	}
	d.a.scratch = append(d.a.scratch, k, v)
	return nil
}

func (d *otlpDecoder) wantAttr(key []byte) bool {
	for _, k := range d.attrKeys {
		if string(key) == k {
			return true
		}
	}
	return false
}
