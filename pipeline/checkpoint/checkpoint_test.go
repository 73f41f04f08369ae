package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sample() *Checkpoint {
	fp := bytes.Repeat([]byte("2026-11-29T21:00:00Z INFO hello\n"), 40)[:1000]
	return &Checkpoint{Files: []File{
		{
			Fingerprint: fp, Offset: 123456, RecordNum: 789,
			Path: "/var/log/app/app.log", Dev: 2049, Inode: 77,
			Attributes: []Attr{
				{AttrFileName, "app.log"},
				{AttrFilePath, "/var/log/app/app.log"},
				{AttrFileNameResolved, "app-1.log"},
				{AttrFilePathResolved, "/data/app-1.log"},
				{"custom.key", "value with \"quotes\" and \xff"},
			},
		},
		{
			Fingerprint: []byte("short"), Offset: 9, RecordNum: 1,
			Path: "/tmp/x", Partial: []byte("half"), Skipping: true,
			PartialSince: time.Unix(1700000000, 123456789),
			Attributes:   []Attr{{AttrFileName, ""}, {AttrFileOwnerName, "root"}},
		},
		{Path: "/empty"},
	}}
}

func TestRoundTrip(t *testing.T) {
	for _, f := range []Format{Protobuf, JSON} {
		t.Run(f.String(), func(t *testing.T) {
			want := sample()
			if f == JSON {
				// JSON strings are UTF-8: the layout cannot keep \xff.
				want.Files[0].Attributes[4].Value = "value with \"quotes\" and ü"
				// The JSON layout keeps attributes in an object, so they
				// come back sorted by key.
				for i := range want.Files {
					a := want.Files[i].Attributes
					for x := 1; x < len(a); x++ {
						for y := x; y > 0 && a[y].Key < a[y-1].Key; y-- {
							a[y], a[y-1] = a[y-1], a[y]
						}
					}
				}
			}
			got, gf := roundTrip(t, &Encoder{Format: f}, want)
			if gf != f {
				t.Errorf("format = %v, want %v", gf, f)
			}
			if !got.Equal(want) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// roundTrip encodes c with enc and decodes it again.
func roundTrip(t *testing.T, enc *Encoder, c *Checkpoint) (*Checkpoint, Format) {
	t.Helper()
	data, err := enc.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	got, f, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return got, f
}

func TestEncoderReuse(t *testing.T) {
	// A second, smaller checkpoint through the same Encoder must not carry
	// anything over from the first.
	var enc Encoder
	if _, err := enc.Encode(sample()); err != nil {
		t.Fatal(err)
	}
	small := &Checkpoint{Files: []File{{Path: "/a", Offset: 1, Attributes: []Attr{{"k", "v"}}}}}
	if got, _ := roundTrip(t, &enc, small); !got.Equal(small) {
		t.Errorf("got %+v, want %+v", got, small)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := enc.Encode(small); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("protobuf Encode allocates %v times per save in steady state", allocs)
	}
}

func TestDecodeCorrupt(t *testing.T) {
	var enc Encoder
	good, err := enc.Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	good = bytes.Clone(good)
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	badVersion := bytes.Clone(good)
	badVersion[0] = 9
	v1 := encodeV1(sample())
	jsonGood, err := (&Encoder{Format: JSON}).Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		msg  string
	}{
		{"empty", nil, "too short"},
		{"truncated", good[:len(good)-10], "first frame"},
		{"header only", good[:3], "first frame"},
		{"version only", good[:1], "no frame"},
		{"bit flip", flipped, "checksum"},
		{"version", badVersion, "version"},
		{"v1 truncated", v1[:len(v1)-10], "checksum"},
		{"v1 with a key", encodeV1Keyed(), "key in a version-1"},
		{"json truncated", jsonGood[:len(jsonGood)/2], "json"},
		{"json version", []byte(`{"version":7,"files":[]}`), "version"},
		{"json negative offset", []byte(`{"version":1,"files":[{"offset":-1}]}`), "negative offset"},
		{"json partial past offset", []byte(`{"version":1,"files":[{"offset":1,"partial":"aGFsZg=="}]}`), "partial line"},
		{"garbage", []byte("\x00\x01\x02\x03\x04\x05"), "version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Decode(tt.data)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %q, want it to mention %q", err, tt.msg)
			}
		})
	}
}

func TestStoreMigratesJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tail.db")
	st := NewStore(FileStorage{Path: path})
	c, f, err := st.Load()
	if err != nil || c != nil {
		t.Fatalf("Load of a missing file = %v, %v", c, err)
	}
	old := `{"version":1,"files":[{"fingerprint":"aGVsbG8=","offset":6,"record_num":1,"path":"/l/a.log","attributes":{"log.file.name":"a.log"}}]}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	c, f, err = st.Load()
	if err != nil {
		t.Fatal(err)
	}
	if f != JSON || len(c.Files) != 1 || string(c.Files[0].Fingerprint) != "hello" || c.Files[0].Offset != 6 {
		t.Fatalf("Load(json) = %+v, %v", c, f)
	}
	if err := st.Save(c); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if raw[0] != Version {
		t.Fatalf("saved checkpoint starts with %q, want the protobuf version byte", raw[0])
	}
	c2, f, err := st.Load()
	if err != nil || f != Protobuf || !c2.Equal(c) {
		t.Fatalf("reload = %+v, %v, %v; want %+v", c2, f, err, c)
	}
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries after saves, want only the checkpoint", len(ents))
	}
}

func TestStoreFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	st := NewStore(FileStorage{Path: filepath.Join(dir, "missing-dir", "tail.db")})
	if err := st.Save(sample()); err == nil {
		t.Fatal("Save into a missing directory succeeded")
	}
	var m Memory
	if _, err := m.Load(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("empty Memory Load err = %v", err)
	}
}

// encodeV1Keyed is a version-1 checkpoint holding a field of version 2.
func encodeV1Keyed() []byte {
	buf := []byte{versionV1}
	buf = appendFile(buf, &File{Path: "/a"}, 7, false, false)
	return binary.BigEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
}

func TestReadsV1(t *testing.T) {
	want := sample()
	got, f, err := Decode(encodeV1(want))
	if err != nil || f != ProtobufV1 {
		t.Fatalf("Decode(v1) = %v, %v", f, err)
	}
	if !got.Equal(want) {
		t.Errorf("v1:\n got %+v\nwant %+v", got, want)
	}
}

func TestBase(t *testing.T) {
	for _, path := range []string{"/var/log/a.log", "a.log", "/", "", "/var/log/", "//x", "a/b"} {
		if got, want := base(path), path[strings.LastIndexByte(path, '/')+1:]; got != want {
			t.Errorf("base(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestAttrCache: snapshots that take attributes from a Store's cache are
// the bytes of snapshots that encode them.
func TestAttrCache(t *testing.T) {
	a, b, c := file(0, 1), file(1, 1), file(2, 1)
	moved := b
	moved.Path = "/elsewhere/" + base(b.Path) // same attributes, other path
	fresh := a
	fresh.Attributes = []Attr{{AttrFileName, "other"}}
	bare := c
	bare.Attributes = nil
	enc := Encoder{attrs: &attrCache{}}
	for i, cp := range []*Checkpoint{
		files(a, b, c), files(a, b, c), files(a, moved, c), files(fresh, b),
		files(b, c, a), files(bare), files(a, b, bare, c), files(),
	} {
		got, err := enc.Encode(cp)
		if err != nil {
			t.Fatal(err)
		}
		if want := appendSnapshot(nil, cp, nil); !bytes.Equal(got, want) {
			t.Fatalf("step %d: cached snapshot differs:\n got %x\nwant %x", i, got, want)
		}
	}
}
