package buffer

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

// drain delivers every chunk the buffer has, in order, and returns their
// payloads: until the buffer holds none (Stats.Pending), for at most five
// seconds (an open chunk lingers before a Get takes it, and Get skips a
// chunk with nothing readable and waits on).
func drain(t *testing.T, b Buffer) []string {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(5 * time.Second); b.Stats().Pending > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d chunks still pending", b.Stats().Pending)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		c, err := b.Get(ctx)
		cancel()
		if err != nil {
			continue
		}
		for _, p := range c.Payloads {
			got = append(got, string(p))
		}
		b.Done(c, 0)
	}
	return got
}

func long(i int) []byte { return []byte(strings.Repeat(string(payload(i)), 3)) }

// withSpares returns a directory whose buffer delivered three chunks of
// long payloads: two of their files are kept as spares, the third removed.
func withSpares(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fsChunks(dir, 300)
	b := mustNew(t, cfg)
	for i := range 6 { // two payloads of 16 + 189 bytes a chunk
		put(t, b, long(i), 1)
	}
	if got := drain(t, b); len(got) != 6 {
		t.Fatalf("delivered %d payloads, want 6", len(got))
	}
	b.Close()
	if n := len(chunkFiles(t, dir, spareExt)); n != spareChunks {
		t.Fatalf("%d spare files, want %d", n, spareChunks)
	}
	if n := len(chunkFiles(t, dir, chunkExt)); n != 0 {
		t.Fatalf("%d chunk files left", n)
	}
	return dir
}

// TestFilesystemReuse checks that a new chunk is written over a delivered
// chunk's file, and that what the file held before is neither replayed
// nor taken for damage, after a restart too: when the new payload ends in
// the middle of an old frame, and when it ends where an old frame begins
// (which only the frames' sequence tells from a new frame).
func TestFilesystemReuse(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"shorter", payload(7)},
		{"frame boundary", long(7)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := withSpares(t)
			var log testsync.Buffer
			b := mustNew(t, fsConfig(dir, &log))
			put(t, b, tc.data, 3)
			files := chunkFiles(t, dir, chunkExt)
			if len(files) != 1 || len(chunkFiles(t, dir, spareExt)) != spareChunks-1 {
				t.Fatalf("chunks %v, spares %v: want a spare reused", files, chunkFiles(t, dir, spareExt))
			}
			fi, err := os.Stat(files[0])
			if err != nil {
				t.Fatal(err)
			}
			if written := int64(headerSize + frameHead + len(tc.data)); fi.Size() <= written {
				t.Fatalf("reused file of %d bytes: nothing left of the chunk before to test with", fi.Size())
			}
			b.Close() // undelivered: replayed at the next start

			b = mustNew(t, fsConfig(dir, &log))
			if got := drain(t, b); !slices.Equal(got, []string{string(tc.data)}) {
				t.Errorf("replayed %q, want only the new payload", got)
			}
			if s := b.Stats(); s.Corrupt != 0 || s.Chunks != 0 {
				t.Errorf("stats = %+v, want nothing damaged or held", s)
			}
			b.Close()
			if strings.Contains(log.String(), "damaged") {
				t.Errorf("a reused file reported damaged:\n%s", log.String())
			}
		})
	}
}

// TestFilesystemReuseKilled: a kill between a spare's rename for a new
// chunk and the writing of its header leaves a file of the new name with
// the delivered chunk's header and frames. Nothing of the new chunk was
// acknowledged and the old was delivered: the file is removed unread.
func TestFilesystemReuseKilled(t *testing.T) {
	dir := withSpares(t)
	spare := chunkFiles(t, dir, spareExt)[0]
	if err := os.Rename(spare, filepath.Join(dir, chunkName(9))); err != nil {
		t.Fatal(err)
	}
	b := mustNew(t, fsConfig(dir, nil))
	defer b.Close()
	if got := drain(t, b); len(got) != 0 {
		t.Errorf("delivered %q again", got)
	}
	if s := b.Stats(); s.Corrupt != 0 || s.Chunks != 0 {
		t.Errorf("stats = %+v", s)
	}
	if files := chunkFiles(t, dir, chunkExt); len(files) != 0 {
		t.Errorf("files left: %v", files)
	}
}

// TestFilesystemReuseDamage checks that damage to the new frames of a
// reused file is still reported.
func TestFilesystemReuseDamage(t *testing.T) {
	for _, tc := range []struct {
		name, problem string
		at            int // offset of the byte flipped, from the first frame's payload
	}{
		{"payload", "bad frame checksum", 3},
		{"length", "bad frame checksum", -frameHead + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := withSpares(t)
			b := mustNew(t, fsConfig(dir, nil))
			put(t, b, payload(7), 1)
			put(t, b, payload(8), 1)
			b.Close()
			path := chunkFiles(t, dir, chunkExt)[0]
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data[headerSize+frameHead+tc.at] ^= 0x01
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			var log testsync.Buffer
			b = mustNew(t, fsConfig(dir, &log))
			defer b.Close()
			if got := drain(t, b); len(got) != 0 {
				t.Errorf("delivered %q from a damaged first frame", got)
			}
			if s := b.Stats(); s.Corrupt != 1 {
				t.Errorf("stats = %+v, want 1 corrupt", s)
			}
			if !strings.Contains(log.String(), tc.problem) {
				t.Errorf("log does not report %q:\n%s", tc.problem, log.String())
			}
		})
	}
}

// TestFilesystemVersion1 checks that a chunk file written before frames
// carried their chunk's sequence is replayed.
func TestFilesystemVersion1(t *testing.T) {
	dir := t.TempDir()
	var h [headerSize]byte
	copy(h[:], fileMagic)
	h[4] = 1
	binary.BigEndian.PutUint64(h[8:], 5)
	binary.BigEndian.PutUint32(h[16:], crc32.Checksum(h[:16], castagnoli))
	file := h[:]
	for i := range 2 {
		p := payload(i)
		var f [frameHead]byte
		binary.BigEndian.PutUint32(f[0:], uint32(len(p)))
		binary.BigEndian.PutUint32(f[4:], 2)
		binary.BigEndian.PutUint32(f[12:], crc32.Update(crc32.Checksum(f[:12], castagnoli), castagnoli, p))
		file = append(append(file, f[:]...), p...)
	}
	if err := os.WriteFile(filepath.Join(dir, chunkName(5)), file, 0o600); err != nil {
		t.Fatal(err)
	}
	b := mustNew(t, fsConfig(dir, nil))
	defer b.Close()
	if got := drain(t, b); !slices.Equal(got, []string{string(payload(0)), string(payload(1))}) {
		t.Errorf("replayed %q", got)
	}
	if s := b.Stats(); s.Corrupt != 0 {
		t.Errorf("stats = %+v", s)
	}
}

// TestFilesystemSync: under sync: full a Put returns once a sync covered
// its payload; under normal no sync is made. Either way what was put is
// there at the next start.
func TestFilesystemSync(t *testing.T) {
	for _, tc := range []struct {
		sync  string
		syncs bool
	}{{"", true}, {SyncFull, true}, {SyncNormal, false}} {
		t.Run(tc.sync, func(t *testing.T) {
			dir := t.TempDir()
			cfg := fsConfig(dir, nil)
			cfg.Sync = tc.sync
			b := mustNew(t, cfg)
			for i := range 3 {
				put(t, b, payload(i), 1)
			}
			if n := b.(*filesystem).syncs.Load(); (n > 0) != tc.syncs {
				t.Errorf("%d syncs", n)
			}
			b.Close()
			b = mustNew(t, fsConfig(dir, nil))
			defer b.Close()
			if got := drain(t, b); len(got) != 3 || got[2] != string(payload(2)) {
				t.Errorf("replayed %q", got)
			}
		})
	}
}

// TestFilesystemReuseLostRename: a power loss between the sync of a
// reused file's first frames and the directory's sync can leave the
// rename undone, the spare's name over the new chunk's header and frames
// (never acknowledged). New chunks number on from that header, so that a
// chunk written over the file later does not take those frames for its
// own; here the client sends the unacknowledged payload again.
func TestFilesystemReuseLostRename(t *testing.T) {
	dir := withSpares(t)
	b := mustNew(t, fsConfig(dir, nil))
	put(t, b, payload(1), 1)
	put(t, b, payload(2), 1)
	b.Close()
	files := chunkFiles(t, dir, chunkExt)
	if len(files) != 1 {
		t.Fatalf("chunk files %v", files)
	}
	if err := os.Rename(files[0], filepath.Join(dir, "00000000000000000001"+spareExt)); err != nil {
		t.Fatal(err)
	}
	b = mustNew(t, fsConfig(dir, nil))
	put(t, b, payload(1), 1)
	b.Close()
	b = mustNew(t, fsConfig(dir, nil))
	defer b.Close()
	if got := drain(t, b); !slices.Equal(got, []string{string(payload(1))}) {
		t.Errorf("replayed %q, want the payload sent again, once", got)
	}
}

// TestFilesystemReuseSeqWrap: frames carry 24 bits of their chunk's
// sequence, their checksum all 64. A chunk 2^24 after the one whose frames
// a reused file still holds, ending where one of them begins, finds it
// damaged rather than its own.
func TestFilesystemReuseSeqWrap(t *testing.T) {
	dir := t.TempDir()
	cfg := fsChunks(dir, 300)
	b := mustNew(t, cfg)
	put(t, b, long(1), 1) // chunk 1: two long frames
	put(t, b, long(2), 1)
	if got := drain(t, b); len(got) != 2 {
		t.Fatalf("delivered %q", got)
	}
	b.Close()
	// Chunks numbered on by 2^24 (a run would have written them).
	if err := os.WriteFile(filepath.Join(dir, "00000000000016777216"+spareExt), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b = mustNew(t, cfg)
	put(t, b, long(3), 1) // chunk 2^24+1, over chunk 1's file, ending where its second frame begins
	b.Close()
	b = mustNew(t, cfg)
	defer b.Close()
	if got := drain(t, b); !slices.Equal(got, []string{string(long(3))}) {
		t.Errorf("replayed %.30q, want only the new payload", got)
	}
}

// TestFilesystemFullDisk: a write that finds the disk full first removes
// the spares, whose blocks make room, and is tried again; with no spares
// the buffer is full (a Put that may not wait gets ErrFull) until a chunk
// is delivered, whose file is then removed rather than kept as a spare.
func TestFilesystemFullDisk(t *testing.T) {
	dir := withSpares(t)
	b := mustNew(t, fsConfig(dir, nil))
	defer b.Close()
	fs := b.(*filesystem)
	var full atomic.Int32 // the writes still to refuse
	fs.writeFrame = func(f *os.File, head, payload []byte, off int64) error {
		if full.Add(-1) >= 0 {
			return &os.PathError{Op: "pwritev", Path: f.Name(), Err: syscall.ENOSPC}
		}
		return writeFrame(f, head, payload, off)
	}

	full.Store(1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := b.Put(ctx, payload(1), 1, false); err != nil {
		t.Fatalf("Put on a full disk with spares: %v", err)
	}
	if n := len(chunkFiles(t, dir, spareExt)); n != 0 {
		t.Errorf("%d spares left after a full disk", n)
	}

	full.Store(1)
	if _, err := b.Put(context.Background(), payload(2), 1, true); !errors.Is(err, ErrFull) {
		t.Fatalf("Put on a full disk without spares: %v, want ErrFull", err)
	}
	if got := drain(t, b); !slices.Equal(got, []string{string(payload(1))}) {
		t.Fatalf("delivered %q", got)
	}
	if n := len(chunkFiles(t, dir, spareExt)); n != 0 {
		t.Errorf("a chunk delivered on a full disk was kept as a spare")
	}
	put(t, b, payload(2), 1) // room again
	if got := drain(t, b); !slices.Equal(got, []string{string(payload(2))}) {
		t.Errorf("delivered %q", got)
	}
}
