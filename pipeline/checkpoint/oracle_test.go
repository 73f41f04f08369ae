package checkpoint

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/policyrun/policyrun/pipeline/checkpoint/internal/pb"
)

// The generated code is the oracle of the hand-written encoder and
// decoder: proto.Marshal must write the bytes appendFile writes, and
// proto.Unmarshal must read what decodeMessage reads.

// checkCanonical fails unless msg, a message this package wrote, is what
// proto.Marshal writes for the message proto.Unmarshal reads from it.
func checkCanonical(t testing.TB, msg []byte) {
	t.Helper()
	var m pb.Checkpoint
	if err := proto.Unmarshal(msg, &m); err != nil {
		t.Fatalf("proto.Unmarshal of a written message: %v", err)
	}
	want, err := proto.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(msg, want) {
		t.Fatalf("written message differs from proto.Marshal:\n got %x\nwant %x", msg, want)
	}
}

// checkLogCanonical runs checkCanonical on every frame of a version-2 log.
func checkLogCanonical(t testing.TB, data []byte) {
	t.Helper()
	for _, msg := range logFrames(data) {
		checkCanonical(t, msg)
	}
}

// logFrames returns the messages of the whole frames of a version-2 log.
func logFrames(data []byte) [][]byte {
	var out [][]byte
	if len(data) == 0 || data[0] != Version {
		return nil
	}
	for rest := data[1:]; ; {
		msg, n, ok := nextFrame(rest)
		if !ok {
			return out
		}
		out = append(out, msg)
		rest = rest[n:]
	}
}

// fromGenerated is decodeMessage done with proto.Unmarshal.
func fromGenerated(b []byte) (*message, error) {
	var pm pb.Checkpoint
	if err := proto.Unmarshal(b, &pm); err != nil {
		return nil, err
	}
	m := &message{removed: pm.Removed}
	for i, pf := range pm.Files {
		f := File{
			Fingerprint: pf.Fingerprint, Offset: pf.Offset, RecordNum: pf.RecordNum,
			Path: string(pf.Path), Dev: pf.Dev, Inode: pf.Inode, Partial: pf.Partial,
			Skipping: pf.Skipping,
		}
		if pf.PartialSinceUnixNano != 0 {
			f.PartialSince = time.Unix(0, pf.PartialSinceUnixNano)
		}
		for _, pa := range pf.Attributes {
			var a Attr
			switch {
			case pa.Known == pb.WellKnownKey_KEY_OTHER:
				a.Key = string(pa.Key)
			case pb.WellKnownKey_name[int32(pa.Known)] != "":
				a.Key = knownNames[pa.Known]
			default:
				return nil, fmt.Errorf("file %d: unknown key %d", i, pa.Known)
			}
			switch pa.Derive {
			case pb.Derive_DERIVE_NONE:
				a.Value = string(pa.Value)
			case pb.Derive_DERIVE_PATH:
				a.Value = f.Path
			case pb.Derive_DERIVE_BASE:
				a.Value = f.Path[strings.LastIndexByte(f.Path, '/')+1:]
			default:
				return nil, fmt.Errorf("file %d: unknown derivation %d", i, pa.Derive)
			}
			f.Attributes = append(f.Attributes, a)
		}
		m.files = append(m.files, f)
		m.meta = append(m.meta, fileMeta{pf.Key, pf.SameFingerprint, pf.SameAttributes})
	}
	return m, nil
}

// checkDecodesAsGenerated fails unless decodeMessage and proto.Unmarshal
// agree on b: both fail, or both read the same.
func checkDecodesAsGenerated(t testing.TB, b []byte) {
	t.Helper()
	var got message
	gotErr := decodeMessage(b, &got)
	want, wantErr := fromGenerated(b)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("decodeMessage error %v, proto.Unmarshal error %v", gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	if !(&Checkpoint{got.files}).Equal(&Checkpoint{want.files}) {
		t.Fatalf("files differ:\n got %+v\nwant %+v", got.files, want.files)
	}
	if !slices.Equal(got.meta, want.meta) || !slices.Equal(got.removed, want.removed) {
		t.Fatalf("keys differ: got %v %v, want %v %v", got.meta, got.removed, want.meta, want.removed)
	}
}

// encodeV1 writes c in the version-1 layout, which only older versions
// wrote: for the tests of reading it.
func encodeV1(c *Checkpoint) []byte {
	buf := []byte{versionV1}
	for i := range c.Files {
		buf = appendFile(buf, &c.Files[i], 0, false, false)
	}
	return binary.BigEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
}

func TestMatchesGenerated(t *testing.T) {
	odd := &Checkpoint{Files: []File{{
		Offset: -1, RecordNum: 1 << 62, Dev: 1<<64 - 1,
		Fingerprint: bytes.Repeat([]byte{0}, 300), Path: strings.Repeat("p/", 100),
		PartialSince: time.Unix(-5, 0),
		// Lengths around the varint steps of the reserved length bytes.
		Attributes: []Attr{{"k", strings.Repeat("v", 120)}, {"k", strings.Repeat("v", 130)}},
	}, {Partial: bytes.Repeat([]byte("x"), 20000), Offset: 20000}, {Path: "/a"}}}
	for name, c := range map[string]*Checkpoint{
		"sample": sample(), "bench": benchCheckpoint(3), "empty": {}, "odd": odd,
	} {
		t.Run(name, func(t *testing.T) {
			snap := appendSnapshot(nil, c, nil)
			checkLogCanonical(t, snap)
			for _, msg := range logFrames(snap) {
				checkDecodesAsGenerated(t, msg)
			}
			v1 := encodeV1(c)
			checkCanonical(t, v1[1:len(v1)-4])
			checkDecodesAsGenerated(t, v1[1:len(v1)-4])
		})
	}
}
