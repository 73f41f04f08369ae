package buffer

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"sync"

	"github.com/policyrun/policyrun/internal/contentenc"
)

// read reads a chunk file's frames. What is damaged (a bad header or
// checksum, a frame cut short) is reported and skipped, with the rest of
// the file after it; a file with nothing readable is removed (or renamed
// .corrupt when damaged) and read returns nil.
func (b *filesystem) read(fc *fsChunk) *Chunk {
	c := &Chunk{Seq: fc.seq, path: fc.path, size: fc.size}
	damaged := func(at int, why string) {
		fc.corrupt = true
		b.corrupt.Add(1)
		b.cfg.Logger.Error("buffer: a chunk file is damaged; what follows the damage is skipped", "file", fc.path,
			"offset", at, "problem", why, "frames_read", len(c.Payloads), "records_read", c.Records)
	}
	if fc.mem != nil {
		b.memFrames(fc, c, damaged)
	} else {
		b.file(fc, c, damaged)
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

// memFrames reads a chunk's payloads from its copy in memory: what was
// written, so unchecked.
func (b *filesystem) memFrames(fc *fsChunk, c *Chunk, damaged func(int, string)) {
	c.mem, c.Joined = fc.mem, fc.mem
	rest, at := fc.mem, headerSize
	for _, f := range fc.memFrames {
		payload := rest[:f.n:f.n]
		rest = rest[f.n:]
		if f.flags != 0 {
			c.Joined = nil
			var ok bool
			if payload, ok = decompress(f.flags, payload, at, damaged); !ok {
				break
			}
		}
		c.Payloads = append(c.Payloads, payload)
		c.Records += int64(f.records)
		at += frameHead + int(f.n)
	}
	fc.mem, fc.memFrames = nil, nil
}

// file reads a chunk's frames from its file. What is damaged is reported
// and skipped, with the rest of the file after it.
func (b *filesystem) file(fc *fsChunk, c *Chunk, damaged func(int, string)) {
	data, err := os.ReadFile(fc.path)
	if int64(len(data)) > fc.size {
		data = data[:fc.size] // a reused file's bytes of the chunk before
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
	case binary.BigEndian.Uint64(data[8:]) != fc.seq:
		// A spare renamed for this chunk and killed before its header
		// was written over: what it holds was delivered, nothing of
		// this chunk was acknowledged. (Or a file renamed by hand: said.)
		b.cfg.Logger.Warn("buffer: a chunk file holds another chunk's header; taken as a spare renamed for it before a kill, and skipped",
			"file", fc.path, "header_sequence", binary.BigEndian.Uint64(data[8:]))
	case data[4] != 1 && data[4] != fileVersion:
		damaged(4, fmt.Sprintf("unknown version %d", data[4]))
	default:
		b.frames(data, c, damaged)
	}
}

// frameDecoders decompress frames. Their bound is no limit: a frame is
// what this buffer wrote, its checksum checked.
var frameDecoders = sync.OnceValue(func() map[byte]contentenc.Decoder {
	ds := map[byte]contentenc.Decoder{}
	for flag, name := range frameEncodings {
		e, _ := contentenc.Lookup(name)
		ds[flag] = e.NewDecoder(1 << 31)
	}
	return ds
})

// decompress decompresses a frame's payload as its flags say.
func decompress(flags byte, payload []byte, at int, damaged func(int, string)) ([]byte, bool) {
	d := frameDecoders()[flags]
	if d == nil {
		damaged(at, fmt.Sprintf("unknown frame flags %#x", flags))
		return nil, false
	}
	out, err := d.Decode(nil, payload)
	if err != nil {
		damaged(at, "frame does not decompress: "+err.Error())
		return nil, false
	}
	return out, true
}

// frames reads the frames of a chunk file's data into c. In
// a reused file, the first frame of another chunk's sequence, or bytes too
// few for a frame header, are what that chunk left: the end, not damage.
func (b *filesystem) frames(data []byte, c *Chunk, damaged func(int, string)) {
	version, reused := data[4], data[5]&headerReused != 0
	chunkSeq := binary.BigEndian.Uint64(data[8:])
	seq := uint32(chunkSeq) & 0xffffff
	for at := headerSize; at < len(data); {
		if len(data)-at < frameHead {
			if !reused {
				damaged(at, "a frame header is cut short")
			}
			return
		}
		h := data[at : at+frameHead]
		if version > 1 && uint32(h[9])<<16|uint32(h[10])<<8|uint32(h[11]) != seq {
			if !reused {
				damaged(at, "a frame of another chunk")
			}
			return
		}
		n := int(binary.BigEndian.Uint32(h[0:]))
		if n > len(data)-at-frameHead {
			damaged(at, "a frame is cut short")
			return
		}
		payload := data[at+frameHead : at+frameHead+n]
		if frameCRC(version, h, payload, chunkSeq) != binary.BigEndian.Uint32(h[12:]) {
			damaged(at, "bad frame checksum")
			return
		}
		if h[8] != 0 {
			var ok bool
			if payload, ok = decompress(h[8], payload, at, damaged); !ok {
				return
			}
		}
		c.Payloads = append(c.Payloads, payload)
		c.Records += int64(binary.BigEndian.Uint32(h[4:]))
		at += frameHead + n
	}
}

// frameCRC is the checksum a frame of the version in chunk seq should
// carry: of its payload, its header's first 12 bytes and the chunk's
// sequence (version 1: the header's 12 bytes and the payload).
func frameCRC(version byte, h, payload []byte, seq uint64) uint32 {
	if version == 1 {
		return crc32.Update(crc32.Checksum(h[:12], castagnoli), castagnoli, payload)
	}
	return frameCRCOf(crc32.Checksum(payload, castagnoli), h, seq)
}

// frameCRCOf finishes a version 2 frame's checksum from its payload's: the
// payload's part is summed before the frame's chunk, and so its sequence,
// is known.
func frameCRCOf(payloadCRC uint32, h []byte, seq uint64) uint32 {
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], seq)
	return crc32.Update(crc32.Update(payloadCRC, castagnoli, h[:12]), castagnoli, s[:])
}
