package buffer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

func payload(i int) []byte { return []byte(fmt.Sprintf("payload %04d %s", i, strings.Repeat("x", 50))) }

func mustNew(t *testing.T, cfg Config) Buffer {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func put(t *testing.T, b Buffer, data []byte, records int) Receipt {
	t.Helper()
	r, err := b.Put(context.Background(), data, records, false)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func get(t *testing.T, b Buffer) *Chunk {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := b.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// noChunk checks that Get finds nothing within a short while.
func noChunk(t *testing.T, b Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if c, err := b.Get(ctx); err == nil {
		t.Fatalf("Get found chunk %d with %q", c.Seq, c.Payloads)
	}
}

func joined(c *Chunk) string { return string(bytes.Join(c.Payloads, []byte("|"))) }

// testWhenFull checks both when_full modes and max_size for a buffer
// type; size is what one 60-byte payload takes of max_size.
func testWhenFull(t *testing.T, typ string, size int64) {
	dir := t.TempDir()
	max := 3 * size
	b := mustNew(t, Config{Type: typ, MaxSize: max, WhenFull: Block, Dir: filepath.Join(dir, "block"), ChunkSize: 1})
	defer b.Close()
	for i := range 3 {
		put(t, b, payload(i), 1)
	}
	if s := b.Stats(); s.Bytes > max {
		t.Errorf("%s: %d bytes held, max_size %d", typ, s.Bytes, max)
	}
	if _, err := b.Put(context.Background(), payload(3), 1, true); !errors.Is(err, ErrFull) {
		t.Fatalf("%s: a Put that may not wait into a full buffer: %v, want ErrFull", typ, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	if _, err := b.Put(ctx, payload(3), 1, false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s: a blocked Put: %v, want it to wait until its context ends", typ, err)
	}
	cancel()
	// A blocked Put goes in once a chunk is done.
	done := make(chan error)
	go func() {
		_, err := b.Put(context.Background(), payload(3), 1, false)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("%s: Put into a full buffer returned %v before there was room", typ, err)
	default:
	}
	b.Done(get(t, b), 0)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.Bytes > max || s.Chunks != 3 {
		t.Errorf("%s: stats %+v, max_size %d", typ, s, max)
	}

	d := mustNew(t, Config{Type: typ, MaxSize: max, WhenFull: DropNewest, Dir: filepath.Join(dir, "drop"), ChunkSize: 1})
	defer d.Close()
	for i := range 3 {
		put(t, d, payload(i), 1)
	}
	for range 2 {
		if _, err := d.Put(context.Background(), payload(9), 1, false); !errors.Is(err, ErrDropped) {
			t.Fatalf("%s: Put into a full drop_newest buffer: %v, want ErrDropped", typ, err)
		}
	}
	// The oldest are kept, the newest dropped.
	for i := range 3 {
		c := get(t, d)
		if joined(c) != string(payload(i)) {
			t.Errorf("%s: chunk %d = %q", typ, i, joined(c))
		}
		d.Done(c, 0)
	}
	if _, err := d.Put(context.Background(), make([]byte, max+1), 1, false); !errors.Is(err, ErrTooBig) {
		t.Errorf("%s: a payload over max_size: %v, want ErrTooBig", typ, err)
	}
}

func TestWhenFull(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testWhenFull(t, Memory, int64(len(payload(0)))) })
	t.Run("filesystem", func(t *testing.T) {
		testWhenFull(t, Filesystem, int64(headerSize+frameHead+len(payload(0))))
	})
}

func fsConfig(dir string, log *testsync.Buffer) Config {
	cfg := Config{Type: Filesystem, Dir: dir, MaxSize: 1 << 20}
	if log != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(log, nil))
	}
	return cfg
}

// fsChunks is fsConfig with chunks that close at size bytes.
func fsChunks(dir string, size int64) Config {
	cfg := fsConfig(dir, nil)
	cfg.ChunkSize = size
	return cfg
}

func chunkFiles(t *testing.T, dir string, ext string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+ext))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

// TestFilesystemReplay checks that chunks survive a restart, come back in
// the order they were put, are removed once done, and that Put gathers
// payloads into one chunk while no worker waits.
func TestFilesystemReplay(t *testing.T) {
	dir := t.TempDir()
	b := mustNew(t, fsConfig(dir, nil))
	// No worker: payloads gather in one chunk file.
	for i := range 5 {
		if n, _ := put(t, b, payload(i), i+1).Wait(context.Background()); n != 0 {
			t.Fatal("a filesystem Put's receipt waits for nothing")
		}
	}
	if files := chunkFiles(t, dir, chunkExt); len(files) != 1 {
		t.Fatalf("5 small payloads, no worker: files %v, want one chunk", files)
	}
	// A worker takes it; the next payloads go into a new chunk.
	c := get(t, b)
	if c.Records != 15 || len(c.Payloads) != 5 || string(c.Payloads[4]) != string(payload(4)) {
		t.Fatalf("chunk: %d records, %d payloads", c.Records, len(c.Payloads))
	}
	for i := 5; i < 8; i++ {
		put(t, b, payload(i), 1)
	}
	b.Close() // c was never done: as a kill would leave it
	b = mustNew(t, fsConfig(dir, nil))
	defer b.Close()
	if s := b.Stats(); s.Replayed != 2 || s.Chunks != 2 {
		t.Errorf("after restart: %+v", s)
	}
	c = get(t, b)
	if len(c.Payloads) != 5 || string(c.Payloads[0]) != string(payload(0)) {
		t.Errorf("first replayed chunk: %q", c.Payloads)
	}
	c2 := get(t, b)
	if len(c2.Payloads) != 3 || string(c2.Payloads[0]) != string(payload(5)) {
		t.Errorf("second replayed chunk: %q", c2.Payloads)
	}
	b.Done(c, 0)
	b.Done(c2, 0)
	if files := chunkFiles(t, dir, chunkExt); len(files) != 0 {
		t.Errorf("delivered chunks left files %v", files)
	}
	if s := b.Stats(); s.Bytes != 0 || s.Chunks != 0 {
		t.Errorf("stats = %+v", s)
	}
	// New chunks number on from the old ones.
	put(t, b, payload(9), 1)
	if c := get(t, b); c.Seq != 3 {
		t.Errorf("seq after replay = %d, want 3", c.Seq)
	}
}

// TestFilesystemChunkSize checks that a chunk closes once it reaches the
// chunk size, so that a backlog is many chunks, each deliverable alone.
func TestFilesystemChunkSize(t *testing.T) {
	dir := t.TempDir()
	cfg := fsChunks(dir, 300)
	b := mustNew(t, cfg)
	defer b.Close()
	for i := range 10 {
		put(t, b, payload(i), 1)
	}
	// 20 + 4 × (16 + 63) = 336 ≥ 300: four payloads a chunk.
	if files := chunkFiles(t, dir, chunkExt); len(files) != 3 {
		t.Errorf("files %v, want 3", files)
	}
	var got []string
	for range 3 {
		c := get(t, b)
		for _, p := range c.Payloads {
			got = append(got, string(p))
		}
		b.Done(c, 0)
	}
	for i := range 10 {
		if got[i] != string(payload(i)) {
			t.Fatalf("payload %d = %q", i, got[i])
		}
	}
}

// TestFilesystemDamage simulates crashes and bad disks: a chunk cut in its
// last frame, one with a bad checksum, one with a bad header. Each is
// reported (log and Stats.Corrupt), what is readable of it is delivered,
// the rest skipped, and the other chunks are replayed.
func TestFilesystemDamage(t *testing.T) {
	dir := t.TempDir()
	cfg := fsChunks(dir, 1) // one payload a chunk
	b := mustNew(t, cfg)
	var twoFrames string
	for i := range 5 {
		put(t, b, payload(i), 1)
	}
	// Chunk 6 has two frames.
	cfg2 := fsConfig(dir, nil)
	b.Close()
	b = mustNew(t, cfg2)
	put(t, b, payload(5), 1)
	put(t, b, payload(6), 1)
	b.Close()
	files := chunkFiles(t, dir, chunkExt)
	if len(files) != 6 {
		t.Fatalf("files %v", files)
	}
	twoFrames = files[5]
	flip := func(path string, at int64) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if at < 0 {
			at += int64(len(data))
		}
		data[at] ^= 0xff
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	flip(files[1], -3)                                                     // a payload byte: bad frame checksum
	flip(files[2], 1)                                                      // the magic
	if err := os.Truncate(files[3], headerSize+frameHead+10); err != nil { // cut in its frame
		t.Fatal(err)
	}
	fi, _ := os.Stat(twoFrames)
	if err := os.Truncate(twoFrames, fi.Size()-5); err != nil { // the second frame cut
		t.Fatal(err)
	}
	// A file a kill left between its creation and its first sync.
	if err := os.WriteFile(filepath.Join(dir, chunkName(7)), []byte("PRB"), 0o600); err != nil {
		t.Fatal(err)
	}

	var log testsync.Buffer
	b = mustNew(t, fsConfig(dir, &log))
	defer b.Close()
	got := drain(t, b)
	want := []string{string(payload(0)), string(payload(4)), string(payload(5))}
	if !slices.Equal(got, want) {
		t.Errorf("delivered %q, want %q", got, want)
	}
	if s := b.Stats(); s.Corrupt != 4 || s.Bytes != 0 || s.Chunks != 0 {
		t.Errorf("stats = %+v, want 4 corrupt and nothing held", s)
	}
	for _, problem := range []string{"bad frame checksum", "bad header", "a frame is cut short"} {
		if !strings.Contains(log.String(), problem) {
			t.Errorf("log does not report %q:\n%s", problem, log.String())
		}
	}
	// Damaged files are kept aside, renamed; the kill's leftover is gone.
	if n := len(chunkFiles(t, dir, corruptExt)); n != 4 {
		t.Errorf("%d .corrupt files, want 4", n)
	}
	if n := len(chunkFiles(t, dir, chunkExt)); n != 0 {
		t.Errorf("%d chunk files left", n)
	}
}

// TestFilesystemKeep checks that a chunk whose retries ran out stays on
// disk, counted, for the next start.
func TestFilesystemKeep(t *testing.T) {
	dir := t.TempDir()
	b := mustNew(t, fsConfig(dir, nil))
	put(t, b, payload(1), 1)
	b.Keep(get(t, b))
	noChunk(t, b)
	if s := b.Stats(); s.Chunks != 1 || s.Pending != 0 {
		t.Errorf("stats = %+v", s)
	}
	b.Close()
	b = mustNew(t, fsConfig(dir, nil))
	defer b.Close()
	if c := get(t, b); joined(c) != string(payload(1)) {
		t.Errorf("kept chunk = %q", joined(c))
	}
}

func TestFilesystemCompression(t *testing.T) {
	for _, comp := range []string{"gzip", "zstd"} {
		t.Run(comp, func(t *testing.T) {
			dir := t.TempDir()
			cfg := fsConfig(dir, nil)
			cfg.Compression = comp
			b := mustNew(t, cfg)
			big := bytes.Repeat([]byte("compressible "), 10000)
			put(t, b, big, 1)
			if s := b.Stats(); s.Bytes > int64(len(big))/10 {
				t.Errorf("%d bytes held for %d compressible ones", s.Bytes, len(big))
			}
			b.Close()
			b = mustNew(t, fsConfig(dir, nil)) // compression is per frame: readable whatever the setting
			defer b.Close()
			if c := get(t, b); !bytes.Equal(c.Payloads[0], big) {
				t.Error("payload changed through compression")
			}
		})
	}
}

// TestFilesystemCompressionMemory: a compressed chunk read from its copy
// in memory gives its payloads decompressed, and no Joined.
func TestFilesystemCompressionMemory(t *testing.T) {
	for _, comp := range []string{"gzip", "zstd"} {
		cfg := fsConfig(t.TempDir(), nil)
		cfg.Compression = comp
		b := mustNew(t, cfg)
		for i := range 3 {
			put(t, b, long(i), 1)
		}
		c := get(t, b)
		if c.Joined != nil || len(c.Payloads) != 3 || !bytes.Equal(c.Payloads[2], long(2)) {
			t.Errorf("%s chunk: joined %q, payloads %q", comp, c.Joined, c.Payloads)
		}
		b.Close()
	}
}

func TestFilesystemLock(t *testing.T) {
	dir := t.TempDir()
	b := mustNew(t, fsConfig(dir, nil))
	if _, err := New(fsConfig(dir, nil)); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Errorf("a second buffer on one directory: %v", err)
	}
	b.Close()
	b = mustNew(t, fsConfig(dir, nil))
	b.Close()
}

// TestConcurrent puts from many goroutines while workers take, and checks
// that every payload is delivered once (run with -race).
func TestConcurrent(t *testing.T) {
	for _, typ := range []string{Memory, Filesystem} {
		t.Run(typ, func(t *testing.T) {
			cfg := Config{Type: typ, Dir: t.TempDir(), MaxSize: 64 << 10, ChunkSize: 4 << 10}
			b := mustNew(t, cfg)
			defer b.Close()
			const writers, each = 8, 100
			seen := map[string]int{}
			var mu sync.Mutex
			ctx, cancel := context.WithCancel(context.Background())
			var workers sync.WaitGroup
			for range 3 {
				workers.Add(1)
				go func() {
					defer workers.Done()
					for {
						c, err := b.Get(ctx)
						if err != nil {
							return
						}
						mu.Lock()
						for _, p := range c.Payloads {
							seen[string(p)]++
						}
						mu.Unlock()
						if s := b.Stats(); s.Bytes > cfg.MaxSize {
							t.Errorf("%d bytes held, max_size %d", s.Bytes, cfg.MaxSize)
						}
						b.Done(c, 0)
					}
				}()
			}
			var puts sync.WaitGroup
			for w := range writers {
				puts.Add(1)
				go func() {
					defer puts.Done()
					for i := range each {
						r, err := b.Put(context.Background(), payload(w*each+i), 1, false)
						if err != nil {
							t.Error(err)
							return
						}
						if _, err := r.Wait(context.Background()); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			puts.Wait()
			if !waitFor(func() bool { return b.Stats().Chunks == 0 }) {
				t.Errorf("chunks left: %+v", b.Stats())
			}
			cancel()
			workers.Wait()
			if len(seen) != writers*each {
				t.Errorf("%d payloads delivered, want %d", len(seen), writers*each)
			}
			for p, n := range seen {
				if n != 1 {
					t.Errorf("%q delivered %d times", p, n)
				}
			}
		})
	}
}

func waitFor(cond func() bool) bool { return testsync.Eventually(5*time.Second, cond) }

// TestFilesystemMemoryCopies: a worker reads a chunk from its copy in
// memory (here its file is gone by then), and the copies of delivered
// chunks are reused by the next ones, whose payloads are their own.
func TestFilesystemMemoryCopies(t *testing.T) {
	dir := t.TempDir()
	cfg := fsChunks(dir, 300)
	b := mustNew(t, cfg)
	defer b.Close()
	fs := b.(*filesystem)
	for round := range 20 {
		for i := range 4 { // 20 + 4 × (16 + 63) ≥ 300: one chunk
			put(t, b, payload(4*round+i), 1)
		}
		files := chunkFiles(t, dir, chunkExt)
		if len(files) != 1 {
			t.Fatalf("round %d: files %v", round, files)
		}
		os.Rename(filepath.Join(dir, files[0]), filepath.Join(dir, "moved"))
		c := get(t, b)
		if len(c.Payloads) != 4 {
			t.Fatalf("round %d: %d payloads", round, len(c.Payloads))
		}
		for i, p := range c.Payloads {
			if string(p) != string(payload(4*round+i)) {
				t.Fatalf("round %d: payload %d = %q", round, i, p)
			}
		}
		if want := bytes.Join(c.Payloads, nil); !bytes.Equal(c.Joined, want) {
			t.Fatalf("round %d: joined %q, want %q", round, c.Joined, want)
		}
		os.Rename(filepath.Join(dir, "moved"), filepath.Join(dir, files[0]))
		b.Done(c, 0)
		if round > 0 && len(fs.memFree) != 1 {
			t.Fatalf("round %d: %d copies kept, want the one reused", round, len(fs.memFree))
		}
	}
}
