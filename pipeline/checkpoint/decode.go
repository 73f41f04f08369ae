package checkpoint

import (
	"fmt"
	"time"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/policyrun/policyrun/pipeline/checkpoint/internal/pb"
)

// message is one decoded Checkpoint message: a frame of a version-2 log,
// or a whole version-1 checkpoint.
type message struct {
	files   []File
	meta    []fileMeta
	removed []uint64
}

// fileMeta is what a frame says about a file beside its state.
type fileMeta struct {
	key               uint64
	sameFP, sameAttrs bool
}

// rawAttr is an attribute as stored, before its key and value are resolved
// (the path it may be derived from can come after it).
type rawAttr struct {
	known      int32
	key, value []byte
	derive     int32
}

// decodeMessage parses b, a serialised Checkpoint, into m, replacing what m
// held. It follows proto.Unmarshal (the fuzz target holds it to that): a
// field it does not know, or with a wire type other than the schema's, is
// skipped; the last of repeated scalars wins. Strings, fingerprints and
// partial lines refer to b, which must not change afterwards: a checkpoint
// is loaded into a buffer of its own, and copying each fingerprint out of
// it would double the work of a load.
func decodeMessage(b []byte, m *message) error {
	n, err := countFiles(b)
	if err != nil {
		return err
	}
	// Fresh slices: the ones of the previous frame may have been adopted by
	// the caller.
	*m = message{files: make([]File, 0, n), meta: make([]fileMeta, 0, n)}
	var attrs []Attr
	var raw []rawAttr
	spans := make([]int, 0, n+1)
	for w := wire(b); len(w) > 0; {
		num, typ, err := w.tag()
		if err != nil {
			return err
		}
		switch {
		case num == fieldFiles && typ == protowire.BytesType:
			v, err := w.bytes()
			if err != nil {
				return err
			}
			m.files = append(m.files, File{})
			m.meta = append(m.meta, fileMeta{})
			spans = append(spans, len(attrs))
			i := len(m.files) - 1
			if raw, err = decodeFile(v, &m.files[i], &m.meta[i], raw[:0]); err != nil {
				return err
			}
			if attrs, err = resolveAttrs(attrs, raw, m.files[i].Path, i); err != nil {
				return err
			}
			continue
		case num == fieldRemoved && typ == protowire.BytesType:
			v, err := w.bytes()
			if err != nil {
				return err
			}
			for packed := wire(v); len(packed) > 0; {
				k, err := packed.varint()
				if err != nil {
					return err
				}
				m.removed = append(m.removed, k)
			}
			continue
		case num == fieldRemoved && typ == protowire.VarintType:
			k, err := w.varint()
			if err != nil {
				return err
			}
			m.removed = append(m.removed, k)
			continue
		}
		if err := w.skip(num, typ); err != nil {
			return err
		}
	}
	// One slice holds every file's attributes; each file gets its part,
	// with no room to grow into the next file's.
	spans = append(spans, len(attrs))
	for i := range m.files {
		m.files[i].Attributes = attrs[spans[i]:spans[i+1]:spans[i+1]]
	}
	return nil
}

// countFiles returns how many files b holds, so that they are decoded into
// a slice of the right size.
func countFiles(b []byte) (int, error) {
	count := 0
	for w := wire(b); len(w) > 0; {
		num, typ, err := w.tag()
		if err != nil {
			return 0, err
		}
		if num == fieldFiles && typ == protowire.BytesType {
			count++
		}
		if err := w.skip(num, typ); err != nil {
			return 0, err
		}
	}
	return count, nil
}

// decodeFile parses one File message into f and meta, and appends its
// attributes to raw.
func decodeFile(b []byte, f *File, meta *fileMeta, raw []rawAttr) ([]rawAttr, error) {
	var since int64
	for w := wire(b); len(w) > 0; {
		num, typ, err := w.tag()
		if err != nil {
			return raw, err
		}
		switch typ {
		case protowire.VarintType:
			v, err := w.varint()
			if err != nil {
				return raw, err
			}
			switch num {
			case fieldOffset:
				f.Offset = int64(v)
			case fieldRecordNum:
				f.RecordNum = int64(v)
			case fieldDev:
				f.Dev = v
			case fieldInode:
				f.Inode = v
			case fieldSkipping:
				f.Skipping = v != 0
			case fieldPartialSince:
				since = int64(v)
			case fieldKey:
				meta.key = v
			case fieldSameFingerprint:
				meta.sameFP = v != 0
			case fieldSameAttributes:
				meta.sameAttrs = v != 0
			}
			continue
		case protowire.BytesType:
			v, err := w.bytes()
			if err != nil {
				return raw, err
			}
			switch num {
			case fieldFingerprint:
				f.Fingerprint = v[:len(v):len(v)]
			case fieldPath:
				f.Path = unsafeString(v)
			case fieldPartial:
				f.Partial = v[:len(v):len(v)]
			case fieldAttributes:
				var a rawAttr
				if err := decodeAttr(v, &a); err != nil {
					return raw, err
				}
				raw = append(raw, a)
			}
			continue
		}
		if err := w.skip(num, typ); err != nil {
			return raw, err
		}
	}
	if since != 0 {
		f.PartialSince = time.Unix(0, since)
	}
	return raw, nil
}

func decodeAttr(b []byte, a *rawAttr) error {
	for w := wire(b); len(w) > 0; {
		num, typ, err := w.tag()
		if err != nil {
			return err
		}
		switch {
		case typ == protowire.VarintType && (num == fieldAttrKnown || num == fieldAttrDerive):
			v, err := w.varint()
			if err != nil {
				return err
			}
			// Enums are int32: the generated code keeps the low 32 bits.
			if num == fieldAttrKnown {
				a.known = int32(v)
			} else {
				a.derive = int32(v)
			}
			continue
		case typ == protowire.BytesType && (num == fieldAttrKey || num == fieldAttrValue):
			v, err := w.bytes()
			if err != nil {
				return err
			}
			if num == fieldAttrKey {
				a.key = v
			} else {
				a.value = v
			}
			continue
		}
		if err := w.skip(num, typ); err != nil {
			return err
		}
	}
	return nil
}

// resolveAttrs appends the attributes of file i, whose path is path, to
// attrs.
func resolveAttrs(attrs []Attr, raw []rawAttr, path string, i int) ([]Attr, error) {
	for _, r := range raw {
		var a Attr
		switch k := pb.WellKnownKey(r.known); {
		case k == pb.WellKnownKey_KEY_OTHER:
			a.Key = unsafeString(r.key)
		case k > 0 && int(k) < len(knownNames):
			a.Key = knownNames[k]
		default:
			return attrs, fmt.Errorf("%w: file %d: unknown attribute key number %d", ErrCorrupt, i, r.known)
		}
		switch pb.Derive(r.derive) {
		case pb.Derive_DERIVE_NONE:
			a.Value = unsafeString(r.value)
		case pb.Derive_DERIVE_PATH:
			a.Value = path
		case pb.Derive_DERIVE_BASE:
			a.Value = base(path)
		default:
			return attrs, fmt.Errorf("%w: file %d: unknown derivation %d", ErrCorrupt, i, r.derive)
		}
		attrs = append(attrs, a)
	}
	return attrs, nil
}

// wire is what is left of a message to decode. Its reads consume what
// they return, and give protowire's errors as ErrCorrupt.
type wire []byte

// tag is protowire.ConsumeTag, which accepts field numbers up to 2³¹-1,
// with the limit of proto.Unmarshal, 2²⁹-1.
func (w *wire) tag() (protowire.Number, protowire.Type, error) {
	num, typ, n := protowire.ConsumeTag(*w)
	if n >= 0 && num > protowire.MaxValidNumber {
		n = -2 // protowire's code of "invalid field number"
	}
	return num, typ, w.advance(n)
}

func (w *wire) varint() (uint64, error) {
	v, n := protowire.ConsumeVarint(*w)
	return v, w.advance(n)
}

func (w *wire) bytes() ([]byte, error) {
	v, n := protowire.ConsumeBytes(*w)
	return v, w.advance(n)
}

// skip passes over the value of a field the decoder does not read.
func (w *wire) skip(num protowire.Number, typ protowire.Type) error {
	return w.advance(protowire.ConsumeFieldValue(num, typ, *w))
}

// advance consumes n bytes, or gives the error of protowire's negative n.
func (w *wire) advance(n int) error {
	if n < 0 {
		return parseError(n)
	}
	*w = (*w)[n:]
	return nil
}

// parseError is apart from advance so that advance, and the reads, are
// small enough to inline.
func parseError(n int) error {
	return wireError(protowire.ParseError(n))
}

func wireError(err error) error {
	return fmt.Errorf("%w: %v", ErrCorrupt, err)
}

// unsafeString views b as a string. It is used only on the bytes of a
// loaded checkpoint, which nothing writes afterwards.
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
