package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// recording is Memory that counts how it was written.
type recording struct {
	Memory
	stores, appends int
	failAppend      bool // write half of the next append, then fail
}

func (r *recording) Store(data []byte) error {
	r.stores++
	return r.Memory.Store(data)
}

func (r *recording) Append(data []byte) error {
	r.appends++
	if r.failAppend {
		r.failAppend = false
		r.Memory.Append(data[:len(data)/2])
		return errors.New("disk full")
	}
	return r.Memory.Append(data)
}

// file returns a tracked file numbered i with its offset at off.
func file(i int, off int64) File {
	p := fmt.Sprintf("/var/log/f%03d.log", i)
	return File{
		Fingerprint: bytes.Repeat([]byte{byte('a' + i%26)}, 1000),
		Offset:      off, RecordNum: off / 10, Path: p, Dev: 1, Inode: uint64(100 + i),
		Attributes: []Attr{{AttrFileName, base(p)}, {AttrFilePath, p}, {AttrFileOwnerName, "root"}},
	}
}

func files(fs ...File) *Checkpoint { return &Checkpoint{Files: fs} }

// retiredFile is an entry the tail keeps for a truncated file: no device
// or inode, so two of them can have the same identity.
func retiredFile(path string, off int64) File {
	return File{Fingerprint: []byte("old content\n"), Offset: off, Path: path}
}

func TestStoreLog(t *testing.T) {
	a, b, c, d := file(0, 100), file(1, 100), file(2, 100), file(3, 100)
	grown := a
	grown.Fingerprint = append(bytes.Clone(a.Fingerprint), "more"...)
	renamed := a
	renamed.Attributes = []Attr{{AttrFileName, "x"}}
	partial := a
	partial.Partial, partial.Offset = []byte("half a line"), 200
	many := func(n int) *Checkpoint {
		c := &Checkpoint{}
		for i := range n {
			c.Files = append(c.Files, file(i, 1))
		}
		return c
	}
	insertAfterFirst := func(steps int) []*Checkpoint {
		out := []*Checkpoint{files(a, b)}
		for i := range steps {
			prev := out[len(out)-1].Files
			next := append([]File{prev[0], file(10+i, 1)}, prev[1:]...)
			out = append(out, files(next...))
		}
		return out
	}
	// maxFrame bounds the bytes a save appends (0: it must write nothing);
	// -1 means a snapshot may be written.
	type step struct {
		cp       *Checkpoint
		maxFrame int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"one file moves", []step{{files(a, b, c), -1}, {files(withOffset(a, 200), b, c), 60}}},
		{"nothing changed", []step{{files(a, b, c), -1}, {files(a, b, c), 0}}},
		{"all move", []step{{files(a, b, c), -1}, {files(withOffset(a, 1), withOffset(b, 2), withOffset(c, 3)), 180}}},
		{"added at the end", []step{{files(a, b), -1}, {files(a, b, c), 1200}}},
		{"added first", []step{{files(a, b), -1}, {files(c, a, b), 1200}}},
		{"added between", []step{{files(a, b), -1}, {files(a, c, b), 1200}, {files(a, d, c, b), 1200}}},
		{"removed", []step{{files(a, b, c), -1}, {files(a, c), 30}, {files(), 30}, {files(b), 1200}}},
		{"moved to the end", []step{{files(a, b, c), -1}, {files(b, c, a), 1200}}},
		{"reversed", []step{{files(a, b, c, d), -1}, {files(d, c, b, a), -1}}},
		{"fingerprint grows", []step{{files(a, b), -1}, {files(grown, b), 1200}}},
		{"attributes change", []step{{files(a, b), -1}, {files(renamed, b), 100}}},
		{"partial line", []step{{files(a, b), -1}, {files(partial, b), 80}, {files(a, b), 60}}},
		{"same identity twice", []step{
			{files(retiredFile("/l", 5), retiredFile("/l", 9), a), -1},
			{files(retiredFile("/l", 9), a), 40},
			{files(retiredFile("/l", 9), retiredFile("/l", 9), a), 100},
		}},
		{"many", []step{{many(300), -1}, {files(append(many(300).Files[:150:150], many(300).Files[151:]...)...), 30}}},
	}
	var keysRunOut []step
	for _, cp := range insertAfterFirst(40) {
		keysRunOut = append(keysRunOut, step{cp, -1})
	}
	tests = append(tests, struct {
		name  string
		steps []step
	}{"keys run out", keysRunOut})

	for _, tt := range tests {
		for _, restart := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/restart=%v", tt.name, restart), func(t *testing.T) {
				var m recording
				st := NewStore(&m)
				for i, s := range tt.steps {
					if restart {
						// A new process: it knows only what it loads.
						st = NewStore(&m)
						if _, _, err := st.Load(); err != nil {
							t.Fatal(err)
						}
					}
					before := len(m.data)
					if err := st.Save(s.cp); err != nil {
						t.Fatal(err)
					}
					checkLogCanonical(t, m.data)
					got, f, err := NewStore(&m).Load()
					if err != nil || f != Protobuf {
						t.Fatalf("step %d: Load: %v, %v", i, f, err)
					}
					if !got.Equal(s.cp) {
						t.Fatalf("step %d: loaded\n%+v\nwant\n%+v", i, got.Files, s.cp.Files)
					}
					if s.maxFrame >= 0 && len(m.data)-before > s.maxFrame {
						t.Errorf("step %d appended %d bytes, want at most %d", i, len(m.data)-before, s.maxFrame)
					}
				}
			})
		}
	}
}

// TestStoreCompacts holds the log to about twice its snapshot, and checks
// that saving one changed file of many does not allocate.
func TestStoreCompacts(t *testing.T) {
	var m recording
	st := NewStore(&m)
	c := benchCheckpoint(100)
	if err := st.Save(c); err != nil {
		t.Fatal(err)
	}
	snap, most := len(m.data), 0
	save := func(i int) {
		c.Files[i%len(c.Files)].Offset++
		if err := st.Save(c); err != nil {
			t.Fatal(err)
		}
		most = max(most, len(m.data))
	}
	for i := range 5000 {
		save(i)
	}
	if m.stores < 2 {
		t.Errorf("%d snapshots in 5,000 saves, want the log rewritten", m.stores)
	}
	if limit := 2*snap + compactSlack; most > limit {
		t.Errorf("log grew to %d bytes, past %d", most, limit)
	}
	if got, _, err := NewStore(&m).Load(); err != nil || !got.Equal(c) {
		t.Fatalf("Load after compactions: %v", err)
	}
	i := 0
	if allocs := testing.AllocsPerRun(200, func() { save(i); i++ }); allocs != 0 {
		t.Errorf("saving one changed file allocates %v times", allocs)
	}
}

// TestTornLog cuts the log inside its last frame, as a crash during the
// append leaves it, at every byte: the load must give the checkpoint of the
// save before (the last poll cycle is read again, nothing is lost), and the
// next save must rewrite the log rather than append after the torn frame.
func TestTornLog(t *testing.T) {
	steps := []*Checkpoint{
		files(file(0, 10), file(1, 10)),
		files(file(0, 20), file(1, 10)),
		files(file(0, 20), file(1, 30), file(2, 5)),
	}
	var m recording
	st := NewStore(&m)
	var ends []int
	for _, c := range steps {
		if err := st.Save(c); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, len(m.data))
	}
	whole := bytes.Clone(m.data)
	last := len(steps) - 1
	for cut := ends[last-1]; cut < ends[last]; cut++ {
		for _, tail := range []string{"", "\x00\x00\x00\x00\x00\x00\x00\x00\x00"} {
			m.data = append(bytes.Clone(whole[:cut]), tail...)
			st := NewStore(&m)
			got, _, err := st.Load()
			if err != nil {
				t.Fatalf("cut at %d: %v", cut, err)
			}
			if !got.Equal(steps[last-1]) {
				t.Fatalf("cut at %d: loaded %+v, want the save before", cut, got.Files)
			}
			stores := m.stores
			next := files(file(0, 40))
			if err := st.Save(next); err != nil {
				t.Fatal(err)
			}
			// Cut exactly after the save before, the log is whole.
			if torn := cut != ends[last-1] || tail != ""; torn && m.stores != stores+1 {
				t.Fatalf("cut at %d: the save after a torn frame appended", cut)
			}
			if got, _, err := NewStore(&m).Load(); err != nil || !got.Equal(next) {
				t.Fatalf("cut at %d: after the next save: %v", cut, err)
			}
		}
	}
}

// TestFileStorageTorn is TestTornLog's case on disk: a kill during an
// append, then a restart.
func TestFileStorageTorn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tail.db")
	st := NewStore(FileStorage{Path: path})
	first, second := files(file(0, 10), file(1, 10)), files(file(0, 20), file(1, 10))
	if err := st.Save(first); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Save(second); err != nil {
		t.Fatal(err)
	}
	if got, _, err := NewStore(FileStorage{Path: path}).Load(); err != nil || !got.Equal(second) {
		t.Fatalf("Load = %v", err)
	}
	if err := os.Truncate(path, fi.Size()+5); err != nil {
		t.Fatal(err)
	}
	st = NewStore(FileStorage{Path: path})
	got, _, err := st.Load()
	if err != nil || !got.Equal(first) {
		t.Fatalf("Load of the torn log = %+v, %v; want the first save", got, err)
	}
	if err := st.Save(second); err != nil {
		t.Fatal(err)
	}
	if got, _, err := NewStore(FileStorage{Path: path}).Load(); err != nil || !got.Equal(second) {
		t.Fatalf("Load after the rewrite = %v", err)
	}
}

// TestAppendFails: a failed append may leave part of its frame; the next
// save rewrites the log.
func TestAppendFails(t *testing.T) {
	var m recording
	st := NewStore(&m)
	if err := st.Save(files(file(0, 1), file(1, 1))); err != nil {
		t.Fatal(err)
	}
	m.failAppend = true
	if err := st.Save(files(file(0, 2), file(1, 1))); err == nil {
		t.Fatal("the failed append was not reported")
	}
	want := files(file(0, 3), file(1, 1))
	if err := st.Save(want); err != nil {
		t.Fatal(err)
	}
	if m.stores != 2 {
		t.Errorf("%d snapshots, want the save after the failure to write one", m.stores)
	}
	if got, _, err := NewStore(&m).Load(); err != nil || !got.Equal(want) {
		t.Fatalf("Load = %v", err)
	}
}

// TestStoreMigratesV1: a version-1 checkpoint is read, and the first save
// writes the current layout even when nothing changed.
func TestStoreMigratesV1(t *testing.T) {
	var m recording
	c := sample()
	if err := m.Memory.Store(encodeV1(c)); err != nil {
		t.Fatal(err)
	}
	st := NewStore(&m)
	got, f, err := st.Load()
	if err != nil || f != ProtobufV1 || !got.Equal(c) {
		t.Fatalf("Load(v1) = %v, %v", f, err)
	}
	if err := st.Save(got); err != nil {
		t.Fatal(err)
	}
	if got, f, err := NewStore(&m).Load(); err != nil || f != Protobuf || !got.Equal(c) {
		t.Fatalf("after the save: %v, %v", f, err)
	}
}
