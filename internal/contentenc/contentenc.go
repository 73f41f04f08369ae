// Package contentenc is the HTTP content encodings of request bodies that
// the otlp input reads and the otlp and http outputs write: gzip and zstd,
// each compressing and decompressing with a bound on what it makes.
package contentenc

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// ErrTooLarge: a body decompresses to more than the decoder's bound.
var ErrTooLarge = errors.New("decompressed body over the size limit")

// Encoding is one content encoding.
type Encoding struct {
	// Name is the Content-Encoding header's value and the config's.
	Name string
	// Append compresses src, appending it to dst; safe for concurrent
	// use.
	Append func(dst, src []byte) []byte
	// NewDecoder returns a decoder that refuses to make more than max
	// bytes (ErrTooLarge).
	NewDecoder func(max int64) Decoder
}

// Decoder decompresses bodies; safe for concurrent use.
type Decoder interface {
	// Decode appends what src decompresses to onto dst; the bound
	// counts dst's bytes too.
	Decode(dst, src []byte) ([]byte, error)
}

// The encodings, in the order errors list them. Both compress at their
// fastest level: bodies are sent once, and a gateway's CPU goes to them
// more than to anything else.
var encodings = []*Encoding{
	{Name: "gzip", Append: gzipAppend, NewDecoder: func(max int64) Decoder { return &gzipDecoder{max: max} }},
	{Name: "zstd", Append: zstdAppend, NewDecoder: newZstdDecoder},
}

// Lookup returns the encoding of a name (as the header or the config says
// it, in lower case).
func Lookup(name string) (*Encoding, bool) {
	for _, e := range encodings {
		if e.Name == name {
			return e, true
		}
	}
	return nil, false
}

// Names lists the encodings' names.
func Names() []string {
	names := make([]string, len(encodings))
	for i, e := range encodings {
		names[i] = e.Name
	}
	return names
}

var gzipWriters sync.Pool // *gzip.Writer

func gzipAppend(dst, src []byte) []byte {
	b := bytes.NewBuffer(dst)
	b.Grow(len(src)/4 + 64)
	w, _ := gzipWriters.Get().(*gzip.Writer)
	if w == nil {
		w, _ = gzip.NewWriterLevel(b, gzip.BestSpeed)
	} else {
		w.Reset(b)
	}
	w.Write(src)
	w.Close()
	w.Reset(nil) // let go of b
	gzipWriters.Put(w)
	return b.Bytes()
}

type gzipDecoder struct {
	max     int64
	readers sync.Pool // *gzip.Reader
}

func (d *gzipDecoder) Decode(dst, src []byte) ([]byte, error) {
	r, _ := d.readers.Get().(*gzip.Reader)
	var err error
	if r == nil {
		r, err = gzip.NewReader(bytes.NewReader(src))
	} else {
		err = r.Reset(bytes.NewReader(src))
	}
	if err != nil {
		return dst, err
	}
	defer d.readers.Put(r)
	b := bytes.NewBuffer(dst)
	n, err := b.ReadFrom(io.LimitReader(r, d.max-int64(len(dst))+1))
	if err != nil {
		return dst, err
	}
	if int64(len(dst))+n > d.max {
		return dst, ErrTooLarge
	}
	return b.Bytes(), nil
}

// zstdEncoder compresses for all: EncodeAll may be called concurrently,
// and runs as many calls at once as it has encoders (GOMAXPROCS, its
// default), each on its caller's goroutine.
var zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithLowerEncoderMem(true))
	if err != nil {
		panic(err) // only for bad options
	}
	return e
})

func zstdAppend(dst, src []byte) []byte { return zstdEncoder().EncodeAll(src, dst) }

type zstdDecoder struct {
	max int64
	d   *zstd.Decoder
}

func newZstdDecoder(limit int64) Decoder {
	// The window is what senders may use (8 MiB, as RFC 8878 asks a
	// decoder to take); the decoded size is the limit.
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxWindow(8<<20),
		zstd.WithDecoderMaxMemory(uint64(max(limit, 8<<20))))
	if err != nil {
		panic(err) // only for bad options
	}
	return &zstdDecoder{max: limit, d: d}
}

// Decode decodes within the bound as it goes (WithDecoderMaxMemory): a
// bomb is refused once the bound is made, not held in memory.
func (d *zstdDecoder) Decode(dst, src []byte) ([]byte, error) {
	out, err := d.d.DecodeAll(src, dst)
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || int64(len(out)) > d.max {
		return dst, ErrTooLarge
	}
	if err != nil {
		return dst, err
	}
	return out, nil
}
