// Package checkpoint holds the tail input's record of how far each file has
// been read, and stores it as a log of protobuf frames: a save appends the
// files that changed, and the log is rewritten whole now and then. It reads
// the older layouts too (a single protobuf message, JSON).
package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"
	"unsafe"
)

// Version is the first byte of a checkpoint file as written now: a log of
// frames. versionV1 starts the older single-message layout.
const (
	Version   byte = 2
	versionV1 byte = 1
)

// Well-known attribute keys: the ones the tail adds to records. Other keys
// are allowed and are stored by name.
const (
	AttrFileName           = "log.file.name"
	AttrFilePath           = "log.file.path"
	AttrFileNameResolved   = "log.file.name_resolved"
	AttrFilePathResolved   = "log.file.path_resolved"
	AttrFileOwnerName      = "log.file.owner.name"
	AttrFileOwnerGroupName = "log.file.owner.group.name"
)

// Maximum sizes accepted when decoding, so that a corrupt file cannot make
// the reader allocate without bound.
const (
	MaxFingerprint = 1 << 20
	MaxPartial     = 1 << 30
)

// Checkpoint is the state of every tracked file.
type Checkpoint struct {
	Files []File
}

// File is the state of one tracked file. Offset is the next byte to read;
// Partial holds the bytes of an unfinished last line, which lie just before
// Offset in the file.
type File struct {
	Fingerprint []byte
	Offset      int64
	RecordNum   int64
	Path        string
	Dev, Inode  uint64
	Attributes  []Attr
	Partial     []byte
	// Skipping is set while the rest of an over-long line is discarded.
	Skipping bool
	// PartialSince is when Partial last grew; zero without a partial line.
	PartialSince time.Time
}

// Attr is one attribute the tail adds to a file's records.
type Attr struct {
	Key, Value string
}

// Format names a checkpoint encoding.
type Format int

const (
	Protobuf   Format = iota // the current layout, a log of frames (version 2)
	JSON                     // the oldest layout, read and still writable
	ProtobufV1               // one protobuf message (version 1), read only
)

func (f Format) String() string {
	switch f {
	case Protobuf:
		return "protobuf"
	case JSON:
		return "json"
	case ProtobufV1:
		return "protobuf-v1"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ErrCorrupt is wrapped by every error that Decode returns for bad data.
var ErrCorrupt = errors.New("corrupt checkpoint")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Decode parses a checkpoint in any layout: JSON when the first byte is
// '{', otherwise a version byte and then the log of frames (Version) or
// one message and its CRC-32C (version 1). Of a log it keeps the frames
// before the first one that is cut short or fails its checksum, and fails
// only when that is the first. The result refers to data, which must not
// change afterwards. Errors wrap ErrCorrupt.
func Decode(data []byte) (*Checkpoint, Format, error) {
	c, f, _, err := decode(data)
	return c, f, err
}

// decode is Decode, with the keys and the state of a version-2 log.
func decode(data []byte) (*Checkpoint, Format, *loaded, error) {
	switch {
	case len(data) > 0 && data[0] == '{':
		c, err := decodeJSON(data)
		return c, JSON, nil, err
	case len(data) > 0 && data[0] == Version:
		l, err := decodeLog(data)
		if err != nil {
			return nil, Protobuf, nil, err
		}
		return l.c, Protobuf, l, nil
	}
	c, err := decodeV1(data)
	return c, ProtobufV1, nil, err
}

// decodeV1 parses the version-1 layout: the version byte, one message
// without keys, and a CRC-32C of both.
func decodeV1(data []byte) (*Checkpoint, error) {
	if len(data) < 5 {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, len(data))
	}
	if data[0] != versionV1 {
		return nil, fmt.Errorf("%w: unknown version byte 0x%02x", ErrCorrupt, data[0])
	}
	body, tail := data[:len(data)-4], data[len(data)-4:]
	if want, got := binary.BigEndian.Uint32(tail), crc32.Checksum(body, castagnoli); want != got {
		return nil, fmt.Errorf("%w: checksum mismatch (stored %08x, computed %08x)", ErrCorrupt, want, got)
	}
	var m message
	if err := decodeMessage(body[1:], &m); err != nil {
		return nil, err
	}
	if len(m.removed) > 0 {
		return nil, fmt.Errorf("%w: removed keys in a version-1 checkpoint", ErrCorrupt)
	}
	for i, meta := range m.meta {
		if meta != (fileMeta{}) {
			return nil, fmt.Errorf("%w: file %d: a key in a version-1 checkpoint", ErrCorrupt, i)
		}
	}
	c := &Checkpoint{Files: m.files}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// validate rejects states the tail could not have written.
func (c *Checkpoint) validate() error {
	for i := range c.Files {
		f := &c.Files[i]
		switch {
		case f.Offset < 0:
			return fmt.Errorf("%w: file %d: negative offset %d", ErrCorrupt, i, f.Offset)
		case f.RecordNum < 0:
			return fmt.Errorf("%w: file %d: negative record number %d", ErrCorrupt, i, f.RecordNum)
		case int64(len(f.Partial)) > f.Offset:
			return fmt.Errorf("%w: file %d: partial line of %d bytes before offset %d", ErrCorrupt, i, len(f.Partial), f.Offset)
		case len(f.Fingerprint) > MaxFingerprint:
			return fmt.Errorf("%w: file %d: fingerprint of %d bytes", ErrCorrupt, i, len(f.Fingerprint))
		case len(f.Partial) > MaxPartial:
			return fmt.Errorf("%w: file %d: partial line of %d bytes", ErrCorrupt, i, len(f.Partial))
		}
	}
	return nil
}

// Equal reports whether a and b hold the same state. It is meant for tests
// and for skipping a save when nothing changed.
func (c *Checkpoint) Equal(d *Checkpoint) bool {
	if len(c.Files) != len(d.Files) {
		return false
	}
	for i := range c.Files {
		if !sameFile(&c.Files[i], &d.Files[i]) {
			return false
		}
	}
	return true
}

// sameFile reports whether a and b hold the same state. The tail hands
// the same fingerprint and attributes from one save to the next, so these
// comparisons mostly find the same memory and stop there.
func sameFile(a, b *File) bool {
	return a.Offset == b.Offset && a.RecordNum == b.RecordNum &&
		a.Dev == b.Dev && a.Inode == b.Inode && a.Skipping == b.Skipping &&
		(a.PartialSince == b.PartialSince || a.PartialSince.Equal(b.PartialSince)) &&
		a.Path == b.Path && bytes.Equal(a.Fingerprint, b.Fingerprint) &&
		bytes.Equal(a.Partial, b.Partial) && sameAttrs(a.Attributes, b.Attributes)
}

func sameAttrs(a, b []Attr) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b) {
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
