package record

import (
	"encoding/binary"
	"math/bits"
	"strconv"
)

// The protobuf wire format, as the OTLP codecs read and write it.

const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// wire reads protobuf fields from b. Offsets are into b; errors carry them.
type wire struct{ b []byte }

// varint reads a varint at i. It and tag and bytesField are split in a
// one-byte case, which inlines, and the rest.
func (w wire) varint(i, end int) (uint64, int, error) {
	if i < end {
		if c := w.b[i]; c < 0x80 {
			return uint64(c), i + 1, nil
		}
	}
	return w.varintLong(i, end)
}

func (w wire) varintLong(i, end int) (uint64, int, error) {
	b := w.b
	var u uint64
	for shift, j := uint(0), i; j < end; shift, j = shift+7, j+1 {
		c := b[j]
		if shift == 63 && c > 1 {
			return 0, i, decodeErr(i, ErrSyntax, "varint overflows 64 bits")
		}
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return u, j + 1, nil
		}
		if shift == 63 {
			break
		}
	}
	return 0, i, decodeErr(i, ErrTruncated, "varint")
}

// tag reads a field's tag at i: its number and wire type.
func (w wire) tag(i, end int) (field int, wt int, next int, err error) {
	if i < end {
		if c := w.b[i]; c < 0x80 && c >= 8 {
			return int(c >> 3), int(c & 7), i + 1, nil
		}
	}
	return w.tagLong(i, end)
}

func (w wire) tagLong(i, end int) (field int, wt int, next int, err error) {
	u, next, err := w.varint(i, end)
	if err != nil {
		return 0, 0, i, err
	}
	field, wt = int(u>>3), int(u&7)
	if field == 0 || u>>3 > 1<<29-1 {
		return 0, 0, i, decodeErr(i, ErrSyntax, "invalid field number "+strconv.FormatUint(u>>3, 10))
	}
	return field, wt, next, nil
}

// bytesField reads the length of a length-delimited field at i and returns
// where its payload starts and ends.
func (w wire) bytesField(i, end int) (int, int, error) {
	if i < end {
		if n := int(w.b[i]); n < 0x80 && n < end-i {
			return i + 1, i + 1 + n, nil
		}
	}
	return w.bytesFieldLong(i, end)
}

func (w wire) bytesFieldLong(i, end int) (int, int, error) {
	n, j, err := w.varint(i, end)
	if err != nil {
		return 0, 0, err
	}
	if n > uint64(end-j) {
		return 0, 0, decodeErr(j, ErrTruncated, "a field of "+strconv.FormatUint(n, 10)+" bytes with "+strconv.Itoa(end-j)+" left")
	}
	return j, j + int(n), nil
}

func (w wire) fixed64(i, end int) (uint64, int, error) {
	if end-i < 8 {
		return 0, i, decodeErr(i, ErrTruncated, "fixed64")
	}
	return binary.LittleEndian.Uint64(w.b[i:]), i + 8, nil
}

func (w wire) fixed32(i, end int) (uint32, int, error) {
	if end-i < 4 {
		return 0, i, decodeErr(i, ErrTruncated, "fixed32")
	}
	return binary.LittleEndian.Uint32(w.b[i:]), i + 4, nil
}

// skip skips the payload of a field of wire type wt at i, whose tag is at
// at.
func (w wire) skip(wt, at, i, end int) (int, error) {
	switch wt {
	case wireVarint:
		_, j, err := w.varint(i, end)
		return j, err
	case wireFixed64:
		_, j, err := w.fixed64(i, end)
		return j, err
	case wireFixed32:
		_, j, err := w.fixed32(i, end)
		return j, err
	case wireBytes:
		_, j, err := w.bytesField(i, end)
		return j, err
	}
	return i, decodeErr(at, ErrWireType, "wire type "+strconv.Itoa(wt)+" (groups are not used by OTLP)")
}

// wantType is the error for a known field sent with another wire type.
func wantType(at int, msg, field string, wt, want int) error {
	return decodeErr(at, ErrWireType, msg+"."+field+" has wire type "+strconv.Itoa(wt)+", not "+strconv.Itoa(want))
}

// Encoding.

func appendVarint(dst []byte, u uint64) []byte {
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

func varintLen(u uint64) int { return (bits.Len64(u|1) + 6) / 7 }

func appendTag(dst []byte, field, wt int) []byte {
	return appendVarint(dst, uint64(field)<<3|uint64(wt))
}

func appendBytesField(dst []byte, field int, b []byte) []byte {
	dst = appendTag(dst, field, wireBytes)
	dst = appendVarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// openField starts a length-delimited field whose length is not known yet:
// it writes the tag and one byte for the length and returns where the
// payload starts; closeField writes the length once the payload is there.
func openField(dst []byte, field int) ([]byte, int) { return openFieldN(dst, field, 1) }

// openFieldN is openField reserving k bytes for the length: as many as the
// length of the field's usual payload takes (2 for a LogRecord of 128 B to
// 16 KiB, 3 for a ScopeLogs of up to 2 MiB), so that closeFieldN seldom
// moves the payload.
func openFieldN(dst []byte, field, k int) ([]byte, int) {
	dst = appendTag(dst, field, wireBytes)
	dst = append(dst, make([]byte, k)...)
	return dst, len(dst)
}

// closeField writes the length of the payload that starts at start, moving
// the payload when its length needs more than the one byte reserved.
func closeField(dst []byte, start int) []byte {
	n := len(dst) - start
	if n < 0x80 {
		dst[start-1] = byte(n)
		return dst
	}
	return closeFieldN(dst, start, 1)
}

// closeFieldN closes a field of openFieldN(…, k): the length is written in
// as many bytes as it takes, the payload moved when that is not k.
func closeFieldN(dst []byte, start, k int) []byte {
	n := len(dst) - start
	need := varintLen(uint64(n))
	switch {
	case need > k:
		dst = append(dst, make([]byte, need-k)...)
		copy(dst[start+need-k:], dst[start:start+n])
	case need < k:
		copy(dst[start-k+need:], dst[start:])
		dst = dst[:len(dst)-(k-need)]
	}
	appendVarint(dst[start-k:start-k], uint64(n))
	return dst
}
