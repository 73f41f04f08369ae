package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/golden"
)

// seeds are the seed corpus: small on purpose, since the fuzzer minimises
// every new input it finds and large ones make that slow.
func seeds(t testing.TB) map[string][]byte {
	small := &Checkpoint{Files: []File{{
		Fingerprint: []byte("2026-11-29 first line\n"), Offset: 40, RecordNum: 2,
		Path: "/var/log/a.log", Dev: 1, Inode: 2, Partial: []byte("half"),
		Attributes: []Attr{{AttrFileName, "a.log"}, {AttrFilePath, "/var/log/a.log"}, {"k", "v"}},
	}}}
	out := map[string][]byte{}
	for _, f := range []Format{Protobuf, JSON} {
		enc := Encoder{Format: f}
		for name, c := range map[string]*Checkpoint{"small": small, "empty": {}} {
			data, err := enc.Encode(c)
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("%s-%s", f, name)] = append([]byte(nil), data...)
		}
	}
	out["protobuf-v1-small"] = encodeV1(small)
	out["protobuf-v1-empty"] = encodeV1(&Checkpoint{})
	for _, name := range []string{"protobuf-small", "protobuf-v1-small", "json-small"} {
		p := out[name]
		out[name[:len(name)-len("small")]+"truncated"] = p[:len(p)/2]
	}
	out["json-partial-since"] = []byte(`{"version":1,"files":[{"offset":9,"partial":"aGFsZg==","partial_since":"2026-11-29T21:00:00.5+01:00","skipping":true}]}`)

	// A log with a frame of each kind: a file changed, one added before
	// it, one removed; and the same log cut inside its last frame.
	var m Memory
	st := NewStore(&m)
	second := File{Fingerprint: []byte("b\n"), Offset: 2, Path: "/var/log/b.log", Inode: 3}
	steps := []*Checkpoint{
		small,
		{Files: []File{withOffset(small.Files[0], 41)}},
		{Files: []File{second, withOffset(small.Files[0], 41)}},
		{Files: []File{second}},
	}
	for _, c := range steps {
		if err := st.Save(c); err != nil {
			t.Fatal(err)
		}
	}
	out["protobuf-log"] = append([]byte(nil), m.data...)
	out["protobuf-log-torn"] = append([]byte(nil), m.data[:len(m.data)-3]...)
	return out
}

func withOffset(f File, off int64) File {
	f.Offset = off
	return f
}

// TestSeedCorpus keeps testdata/fuzz/FuzzCheckpointDecode in step with
// seeds; go test -run TestSeedCorpus -update rewrites it. The protobuf-v1
// files were written by the version-1 encoder and must not change.
func TestSeedCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzCheckpointDecode")
	for name, data := range seeds(t) {
		golden.Check(t, filepath.Join(dir, name), []byte("go test fuzz v1\n[]byte("+strconv.Quote(string(data))+")\n"))
	}
}

// FuzzCheckpointDecode feeds arbitrary bytes to the decoders. Decode must
// not panic; errors wrap ErrCorrupt; every protobuf message in the input
// must be read as proto.Unmarshal reads it; and what Decode accepts must
// survive a re-encode. The seed corpus is in testdata/fuzz/FuzzCheckpointDecode.
func FuzzCheckpointDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		switch {
		case len(data) > 0 && data[0] == Version:
			for _, msg := range logFrames(data) {
				checkDecodesAsGenerated(t, msg)
			}
		case len(data) >= 5 && data[0] == versionV1:
			checkDecodesAsGenerated(t, data[1:len(data)-4])
		}
		c, format, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if format == ProtobufV1 {
			format = Protobuf // written as the current layout
		}
		enc := Encoder{Format: format}
		again, err := enc.Encode(c)
		if err != nil {
			t.Fatalf("re-encoding a decoded checkpoint: %v", err)
		}
		if format == Protobuf {
			checkLogCanonical(t, again)
		}
		c2, format2, err := Decode(again)
		if err != nil || format2 != format {
			t.Fatalf("decoding the re-encoded checkpoint: %v (%v)", err, format2)
		}
		if !c2.Equal(c) {
			t.Fatalf("re-encoded checkpoint differs:\n got %+v\nwant %+v", c2, c)
		}
	})
}

// framed builds a version-2 log from data, read as messages each preceded
// by its length (a uvarint), each framed with the right checksum: random
// frames would almost never pass it, and FuzzLog is after what lies
// behind it.
func framed(data []byte) []byte {
	log := []byte{Version}
	for len(data) > 0 {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)-k) {
			n, k = uint64(len(data)), 0
		}
		msg := data[k : k+int(n)]
		data = data[k+int(n):]
		start := beginFrame(&log)
		log = endFrame(append(log, msg...), start)
	}
	return log
}

// unframed is framed's inverse, for the seeds.
func unframed(log []byte) []byte {
	var out []byte
	for _, msg := range logFrames(log) {
		out = binary.AppendUvarint(out, uint64(len(msg)))
		out = append(out, msg...)
	}
	return out
}

// FuzzLog decodes logs of well-framed messages: the frames' keys, removed
// keys and same_* flags must be applied without panicking, fail only with
// ErrCorrupt, and what decodes must survive a snapshot and a re-read.
func FuzzLog(f *testing.F) {
	for _, name := range []string{"protobuf-log", "protobuf-small", "protobuf-empty"} {
		f.Add(unframed(seeds(f)[name]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		log := framed(data)
		c, format, err := Decode(log)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if format != Protobuf {
			t.Fatalf("format %v", format)
		}
		again, _, err := Decode(appendSnapshot(nil, c, nil))
		if err != nil || !again.Equal(c) {
			t.Fatalf("snapshot of a decoded log: %v", err)
		}
	})
}

// FuzzStore runs edit sequences through a Store: data is read as
// operations on a list of files (move one, add one, remove one, move one
// elsewhere in the list, save), and after every save a fresh Store must
// load exactly what was saved.
func FuzzStore(f *testing.F) {
	f.Add([]byte{0, 1, 4, 2, 4, 3, 4, 0, 0, 4})
	f.Add([]byte{1, 1, 1, 1, 4, 3, 3, 3, 4, 1, 4})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var m Memory
		st := NewStore(&m)
		var cur []File
		next := 0
		save := func() {
			c := &Checkpoint{Files: cur}
			if err := st.Save(c); err != nil {
				t.Fatal(err)
			}
			got, _, err := NewStore(&m).Load()
			if err != nil || !got.Equal(c) {
				t.Fatalf("after ops %v: loaded %v, %v; want %d files", ops, got, err, len(cur))
			}
		}
		for i, op := range ops {
			at := 0
			if len(cur) > 0 {
				at = int(op>>3) % len(cur)
			}
			switch op & 7 {
			case 0, 5:
				if len(cur) > 0 {
					cur[at].Offset++
				}
			case 1, 6:
				next++
				cur = append(cur[:at], append([]File{file(next, int64(i))}, cur[at:]...)...)
			case 2:
				if len(cur) > 0 {
					cur = append(cur[:at], cur[at+1:]...)
				}
			case 3:
				if len(cur) > 1 {
					f := cur[at]
					cur = append(cur[:at], cur[at+1:]...)
					cur = append(cur, f)
				}
			default:
				save()
			}
		}
		save()
	})
}
