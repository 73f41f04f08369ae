// Package checkpoint holds the tail input's record of how far each file has
// been read, and stores it as protobuf (or reads the older JSON layout).
package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"
)

// Version is the first byte of a protobuf checkpoint file.
const Version byte = 1

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
	Protobuf Format = iota // the current layout
	JSON                   // the older layout, read and still writable
)

func (f Format) String() string {
	switch f {
	case Protobuf:
		return "protobuf"
	case JSON:
		return "json"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ErrCorrupt is wrapped by every error that Decode returns for bad data.
var ErrCorrupt = errors.New("corrupt checkpoint")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Decode parses a checkpoint in either layout: JSON when the first byte is
// '{', otherwise a version byte, a protobuf message and a CRC-32C. Errors
// wrap ErrCorrupt.
func Decode(data []byte) (*Checkpoint, Format, error) {
	if len(data) > 0 && data[0] == '{' {
		c, err := decodeJSON(data)
		return c, JSON, err
	}
	c, err := decodeProto(data)
	return c, Protobuf, err
}

// frame appends the CRC of buf[start:] to buf.
func frame(buf []byte, start int) []byte {
	sum := crc32.Checksum(buf[start:], castagnoli)
	return binary.BigEndian.AppendUint32(buf, sum)
}

// unframe checks the version byte and checksum and returns the payload.
func unframe(data []byte) ([]byte, error) {
	if len(data) < 5 {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, len(data))
	}
	if data[0] != Version {
		return nil, fmt.Errorf("%w: unknown version byte 0x%02x", ErrCorrupt, data[0])
	}
	body, tail := data[:len(data)-4], data[len(data)-4:]
	if want, got := binary.BigEndian.Uint32(tail), crc32.Checksum(body, castagnoli); want != got {
		return nil, fmt.Errorf("%w: checksum mismatch (stored %08x, computed %08x)", ErrCorrupt, want, got)
	}
	return body[1:], nil
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
		a, b := &c.Files[i], &d.Files[i]
		if !bytes.Equal(a.Fingerprint, b.Fingerprint) || a.Offset != b.Offset ||
			a.RecordNum != b.RecordNum || a.Path != b.Path || a.Dev != b.Dev ||
			a.Inode != b.Inode || !bytes.Equal(a.Partial, b.Partial) ||
			a.Skipping != b.Skipping || !a.PartialSince.Equal(b.PartialSince) ||
			len(a.Attributes) != len(b.Attributes) {
			return false
		}
		for j := range a.Attributes {
			if a.Attributes[j] != b.Attributes[j] {
				return false
			}
		}
	}
	return true
}
