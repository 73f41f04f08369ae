package buffer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
)

// read reads a chunk file's frames. What is damaged (a bad header or
// checksum, a frame cut short) is reported and skipped, with the rest of
// the file after it; a file with nothing readable is removed (or renamed
// .corrupt when damaged) and read returns nil.
func (b *filesystem) read(fc *fsChunk) *Chunk {
	data, err := fc.mem, error(nil)
	fc.mem = nil
	c := &Chunk{Seq: fc.seq, path: fc.path, size: fc.size, mem: data}
	if data == nil {
		data, err = os.ReadFile(fc.path)
	}
	damaged := func(at int, why string) {
		fc.corrupt = true
		b.corrupt.Add(1)
		b.cfg.Logger.Error("buffer: a chunk file is damaged; what follows the damage is skipped", "file", fc.path,
			"offset", at, "problem", why, "frames_read", len(c.Payloads), "records_read", c.Records)
	}
	switch {
	case err != nil:
		damaged(0, err.Error())
	case len(data) < headerSize && fc.frames == 0:
		// Created and killed before its first payload was synced: it
		// holds nothing that was acknowledged.
	case len(data) < headerSize:
		damaged(0, "the header is cut short")
	case string(data[:4]) != fileMagic || crc32.Checksum(data[:16], castagnoli) != binary.BigEndian.Uint32(data[16:]):
		damaged(0, "bad header (magic or checksum)")
	case data[4] != fileVersion:
		damaged(4, fmt.Sprintf("unknown version %d", data[4]))
	default:
		b.frames(data, c, c.mem == nil, damaged)
	}
	if len(c.Payloads) == 0 {
		b.mu.Lock()
		b.remove(fc)
		b.freeMem(c.mem)
		b.mu.Unlock()
		return nil
	}
	return c
}

// frames reads the frames of data into c, checking their checksums when
// data was read from the file (a copy in memory is what was written).
func (b *filesystem) frames(data []byte, c *Chunk, check bool, damaged func(int, string)) {
	for at := headerSize; at < len(data); {
		if len(data)-at < frameHead {
			damaged(at, "a frame header is cut short")
			return
		}
		h := data[at : at+frameHead]
		n := int(binary.BigEndian.Uint32(h[0:]))
		if n > len(data)-at-frameHead {
			damaged(at, "a frame is cut short")
			return
		}
		payload := data[at+frameHead : at+frameHead+n]
		if check && crc32.Update(crc32.Checksum(h[:12], castagnoli), castagnoli, payload) != binary.BigEndian.Uint32(h[12:]) {
			damaged(at, "bad frame checksum")
			return
		}
		if h[8]&frameGzip != 0 {
			zr, err := gzip.NewReader(bytes.NewReader(payload))
			if err == nil {
				payload, err = io.ReadAll(zr)
			}
			if err != nil {
				damaged(at, "frame does not decompress: "+err.Error())
				return
			}
		}
		c.Payloads = append(c.Payloads, payload)
		c.Records += int64(binary.BigEndian.Uint32(h[4:]))
		at += frameHead + n
	}
}
