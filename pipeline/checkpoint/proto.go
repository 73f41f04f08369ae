package checkpoint

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/policyrun/policyrun/pipeline/checkpoint/internal/pb"
)

// Field numbers, read from the descriptors of internal/pb/checkpoint.proto
// so that the schema is the one place they are written down. The encoder
// and decoder below use protowire directly; the generated code is their
// test oracle (proto.Marshal and proto.Unmarshal must agree with them).
var (
	fieldFiles   = fieldNum(&pb.Checkpoint{}, "files")
	fieldRemoved = fieldNum(&pb.Checkpoint{}, "removed")

	fieldFingerprint     = fieldNum(&pb.File{}, "fingerprint")
	fieldOffset          = fieldNum(&pb.File{}, "offset")
	fieldRecordNum       = fieldNum(&pb.File{}, "record_num")
	fieldPath            = fieldNum(&pb.File{}, "path")
	fieldDev             = fieldNum(&pb.File{}, "dev")
	fieldInode           = fieldNum(&pb.File{}, "inode")
	fieldAttributes      = fieldNum(&pb.File{}, "attributes")
	fieldPartial         = fieldNum(&pb.File{}, "partial")
	fieldSkipping        = fieldNum(&pb.File{}, "skipping")
	fieldPartialSince    = fieldNum(&pb.File{}, "partial_since_unix_nano")
	fieldKey             = fieldNum(&pb.File{}, "key")
	fieldSameFingerprint = fieldNum(&pb.File{}, "same_fingerprint")
	fieldSameAttributes  = fieldNum(&pb.File{}, "same_attributes")

	fieldAttrKnown  = fieldNum(&pb.Attribute{}, "known")
	fieldAttrKey    = fieldNum(&pb.Attribute{}, "key")
	fieldAttrValue  = fieldNum(&pb.Attribute{}, "value")
	fieldAttrDerive = fieldNum(&pb.Attribute{}, "derive")
)

func fieldNum(m proto.Message, name string) protowire.Number {
	fd := m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic("checkpoint: no field " + name + " in the schema")
	}
	return fd.Number()
}

// knownKey numbers the keys the tail uses; a switch beats a map lookup on
// the save path.
func knownKey(k string) pb.WellKnownKey {
	switch k {
	case AttrFileName:
		return pb.WellKnownKey_LOG_FILE_NAME
	case AttrFilePath:
		return pb.WellKnownKey_LOG_FILE_PATH
	case AttrFileNameResolved:
		return pb.WellKnownKey_LOG_FILE_NAME_RESOLVED
	case AttrFilePathResolved:
		return pb.WellKnownKey_LOG_FILE_PATH_RESOLVED
	case AttrFileOwnerName:
		return pb.WellKnownKey_LOG_FILE_OWNER_NAME
	case AttrFileOwnerGroupName:
		return pb.WellKnownKey_LOG_FILE_OWNER_GROUP_NAME
	}
	return pb.WellKnownKey_KEY_OTHER
}

// knownNames is knownKey the other way round, indexed by number.
var knownNames = [...]string{
	pb.WellKnownKey_LOG_FILE_NAME:             AttrFileName,
	pb.WellKnownKey_LOG_FILE_PATH:             AttrFilePath,
	pb.WellKnownKey_LOG_FILE_NAME_RESOLVED:    AttrFileNameResolved,
	pb.WellKnownKey_LOG_FILE_PATH_RESOLVED:    AttrFilePathResolved,
	pb.WellKnownKey_LOG_FILE_OWNER_NAME:       AttrFileOwnerName,
	pb.WellKnownKey_LOG_FILE_OWNER_GROUP_NAME: AttrFileOwnerGroupName,
}

// base is filepath.Base without its special cases: the value a tail puts in
// log.file.name for a path.
//
// It steps from separator to separator with IndexByte, a vector loop,
// rather than LastIndexByte, a byte-by-byte one: a path has a few
// separators and a long last element.
func base(path string) string {
	for {
		i := strings.IndexByte(path, filepath.Separator)
		if i < 0 {
			return path
		}
		path = path[i+1:]
	}
}

// An Encoder turns checkpoints into file contents: a version-2 log of one
// frame holding every file, or the older JSON layout. It reuses its buffer,
// so encoding does not allocate in steady state. The zero Encoder writes
// protobuf.
type Encoder struct {
	Format Format

	buf   []byte
	attrs *attrCache // set by a Store, nil otherwise
}

// Encode returns the encoded checkpoint. The result is valid until the next
// call.
func (e *Encoder) Encode(c *Checkpoint) ([]byte, error) {
	switch e.Format {
	case Protobuf:
		e.buf = appendSnapshot(e.buf[:0], c, e.attrs)
		return e.buf, nil
	case JSON:
		return e.encodeJSON(c)
	}
	return nil, fmt.Errorf("checkpoint: cannot write format %v", e.Format)
}

// snapshotKey is the key of the i'th file of a snapshot. The gaps leave
// room for 32 files inserted one after another at the same place before a
// save has to write a snapshot again (Store.Save).
func snapshotKey(i int) uint64 { return uint64(i+1) << 32 }

// appendSnapshot appends a whole version-2 log to buf: the version byte and
// one frame with every file, keyed by snapshotKey. It takes the files'
// attributes from cache when there is one.
func appendSnapshot(buf []byte, c *Checkpoint, cache *attrCache) []byte {
	buf = append(buf, Version)
	start := beginFrame(&buf)
	for i := range c.Files {
		f := &c.Files[i]
		if cache == nil {
			buf = appendFile(buf, f, snapshotKey(i), false, false)
			continue
		}
		buf = appendFileWith(buf, f, snapshotKey(i), false, false, cache.get(i, f))
	}
	if cache != nil {
		cache.trim(len(c.Files))
	}
	return endFrame(buf, start)
}

// attrCache holds the encoded attributes of each file of the last
// snapshot, by position. A tail's files keep their attributes, in the same
// slice, for as long as they are tracked, and encoding them is a third of
// the work of a snapshot, the fingerprints' copy aside. Only a Store uses
// one: it already requires that a saved checkpoint's attributes are not
// modified in place.
type attrCache struct {
	ids []attrsID
	enc [][]byte
}

// attrsID is what the cached encoding depends on: the attribute slice and
// the path that values may be derived from.
type attrsID struct {
	data *Attr
	n    int
	path string
}

// get returns the encoded attributes of f, the file at position i.
func (ac *attrCache) get(i int, f *File) []byte {
	id := attrsID{unsafe.SliceData(f.Attributes), len(f.Attributes), f.Path}
	for len(ac.ids) <= i {
		ac.ids, ac.enc = append(ac.ids, attrsID{}), append(ac.enc, nil)
	}
	if ac.ids[i] == id && ac.enc[i] != nil {
		return ac.enc[i]
	}
	ac.ids[i], ac.enc[i] = id, appendAttrs(ac.enc[i][:0], f)
	return ac.enc[i]
}

// trim forgets the files past the first n.
func (ac *attrCache) trim(n int) {
	if n < len(ac.ids) {
		clear(ac.ids[n:])
		clear(ac.enc[n:])
		ac.ids, ac.enc = ac.ids[:n], ac.enc[:n]
	}
}

// beginFrame appends room for a frame's length and returns where the frame
// starts.
func beginFrame(buf *[]byte) int {
	start := len(*buf)
	*buf = append(*buf, 0, 0, 0, 0)
	return start
}

// endFrame fills in the length of the frame that starts at start and
// appends its checksum.
func endFrame(buf []byte, start int) []byte {
	binary.BigEndian.PutUint32(buf[start:], uint32(len(buf)-start-frameHeader))
	return binary.BigEndian.AppendUint32(buf, crc32.Checksum(buf[start:], castagnoli))
}

// appendFile appends f as one element of Checkpoint.files. sameFP and
// sameAttrs leave out the fingerprint or the attributes, which the reader
// takes from the entry with the same key.
//
// It writes exactly what proto.Marshal writes for the equivalent message
// (fields in number order, zero values omitted; the tests hold it to
// that), without building the message: the generated marshaller walks a
// message per file and per attribute twice, sizes and then bytes.
func appendFile(buf []byte, f *File, key uint64, sameFP, sameAttrs bool) []byte {
	return appendFileWith(buf, f, key, sameFP, sameAttrs, nil)
}

// appendFileWith is appendFile taking f's encoded attributes from attrs
// when it is not nil.
func appendFileWith(buf []byte, f *File, key uint64, sameFP, sameAttrs bool, attrs []byte) []byte {
	buf = appendTag(buf, fieldFiles, protowire.BytesType)
	// A file with a fingerprint takes more than 127 bytes and, short of a
	// partial line, fewer than 16,384: the length is written in two bytes
	// reserved here, and the body moved only in the other cases.
	lenAt := len(buf)
	buf = append(buf, 0, 0)
	if !sameFP {
		buf = appendBytes(buf, fieldFingerprint, f.Fingerprint)
	}
	buf = appendVarint(buf, fieldOffset, uint64(f.Offset))
	buf = appendVarint(buf, fieldRecordNum, uint64(f.RecordNum))
	buf = appendString(buf, fieldPath, f.Path)
	buf = appendVarint(buf, fieldDev, f.Dev)
	buf = appendVarint(buf, fieldInode, f.Inode)
	switch {
	case sameAttrs:
	case attrs != nil:
		buf = append(buf, attrs...)
	default:
		buf = appendAttrs(buf, f)
	}
	buf = appendBytes(buf, fieldPartial, f.Partial)
	buf = appendBool(buf, fieldSkipping, f.Skipping)
	buf = appendVarint(buf, fieldPartialSince, uint64(unixNano(f.PartialSince)))
	buf = appendVarint(buf, fieldKey, key)
	buf = appendBool(buf, fieldSameFingerprint, sameFP)
	buf = appendBool(buf, fieldSameAttributes, sameAttrs)
	return putLength(buf, lenAt, 2)
}

// appendAttrs appends f's attributes as File.attributes.
func appendAttrs(buf []byte, f *File) []byte {
	if len(f.Attributes) == 0 {
		return buf
	}
	name := base(f.Path)
	for _, a := range f.Attributes {
		buf = appendAttr(buf, a, f.Path, name)
	}
	return buf
}

// appendAttr appends a as one element of File.attributes: a numbered key
// or a named one, and a value or where to derive it from.
func appendAttr(buf []byte, a Attr, path, name string) []byte {
	known, key := knownKey(a.Key), ""
	if known == pb.WellKnownKey_KEY_OTHER {
		key = a.Key
	}
	value, derive := a.Value, pb.Derive_DERIVE_NONE
	switch {
	case value == "":
	case value == path:
		value, derive = "", pb.Derive_DERIVE_PATH
	case value == name:
		value, derive = "", pb.Derive_DERIVE_BASE
	}
	buf = appendTag(buf, fieldAttributes, protowire.BytesType)
	lenAt := len(buf)
	buf = append(buf, 0)
	buf = appendVarint(buf, fieldAttrKnown, uint64(known))
	buf = appendString(buf, fieldAttrKey, key)
	buf = appendString(buf, fieldAttrValue, value)
	buf = appendVarint(buf, fieldAttrDerive, uint64(derive))
	return putLength(buf, lenAt, 1)
}

// putLength writes the length of the message after the reserved bytes at
// buf[at:at+reserved] as a varint there, moving the message when the
// varint needs another number of bytes.
func putLength(buf []byte, at, reserved int) []byte {
	n := len(buf) - at - reserved
	size := protowire.SizeVarint(uint64(n))
	if size != reserved {
		end := len(buf)
		if size > reserved {
			buf = append(buf, make([]byte, size-reserved)...)
		}
		copy(buf[at+size:], buf[at+reserved:end])
		buf = buf[:end+size-reserved]
	}
	protowire.AppendVarint(buf[at:at], uint64(n))
	return buf
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// appendTag and appendUvarint are protowire's, with the one-byte case
// inlined: it is most of the tags and lengths of a checkpoint.
func appendTag(buf []byte, num protowire.Number, typ protowire.Type) []byte {
	return appendUvarint(buf, uint64(num)<<3|uint64(typ))
}

func appendUvarint(buf []byte, v uint64) []byte {
	if v < 1<<7 {
		return append(buf, byte(v)) // small enough to be inlined
	}
	return appendUvarintLong(buf, v)
}

// Not inlined, so that appendUvarint is.
//
//go:noinline
func appendUvarintLong(buf []byte, v uint64) []byte {
	if v < 1<<14 {
		return append(buf, byte(v)|0x80, byte(v>>7))
	}
	return protowire.AppendVarint(buf, v)
}

// Proto3 omits fields holding their zero value; these helpers do the same.

func appendVarint(buf []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return buf
	}
	buf = appendTag(buf, num, protowire.VarintType)
	return appendUvarint(buf, v)
}

func appendBool(buf []byte, num protowire.Number, v bool) []byte {
	if !v {
		return buf
	}
	return appendVarint(buf, num, 1)
}

func appendBytes(buf []byte, num protowire.Number, b []byte) []byte {
	if len(b) == 0 {
		return buf
	}
	buf = appendTag(buf, num, protowire.BytesType)
	buf = appendUvarint(buf, uint64(len(b)))
	return append(buf, b...)
}

func appendString(buf []byte, num protowire.Number, s string) []byte {
	if len(s) == 0 {
		return buf
	}
	buf = appendTag(buf, num, protowire.BytesType)
	buf = appendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// appendRemoved appends keys as Checkpoint.removed, packed as proto3 packs
// a repeated scalar.
func appendRemoved(buf []byte, keys []uint64) []byte {
	if len(keys) == 0 {
		return buf
	}
	n := 0
	for _, k := range keys {
		n += protowire.SizeVarint(k)
	}
	buf = protowire.AppendTag(buf, fieldRemoved, protowire.BytesType)
	buf = protowire.AppendVarint(buf, uint64(n))
	for _, k := range keys {
		buf = protowire.AppendVarint(buf, k)
	}
	return buf
}
