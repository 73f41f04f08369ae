//go:build unix

package buffer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/rusage"
)

// benchPayload is B5's request: 100 records as protobuf, about 52 KB.
const (
	benchPayload = 52 << 10
	benchRecords = 100
)

// BenchmarkPut measures Puts of B5's requests from 16 goroutines, as the
// otlp input makes them, into a buffer whose chunks 4 workers take and
// finish (a memory buffer's Put waits for that, as an output's Write
// does; a filesystem buffer's for the sync); and, beside it, the floor of a
// durable write on this machine: the same payloads written over a file
// that exists (as the buffer writes over a spare) and fdatasynced every
// group payloads, with no buffer at all. Wall time hides what a sync
// costs (its wait is not CPU, its writeback is), so each reports the CPU
// of the whole process per Put (cpu-ns/op, user+sys): divided by 100, the
// CPU per record that B5 charges to the server for the buffer. Under sync
// normal nothing slows the writers, which outrun the 4 workers (each
// write holds the buffer's lock): more than memChunks chunks wait, and
// the later ones are read back from their files, which is what a backlog
// costs.
func BenchmarkPut(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchPut(b, Config{Type: Memory}) })
	for _, mode := range []string{SyncFull, SyncNormal} {
		b.Run("filesystem/sync="+mode, func(b *testing.B) { benchPut(b, Config{Type: Filesystem, Sync: mode}) })
	}
	for _, group := range []int{0, 1, 4, 16} {
		b.Run(fmt.Sprintf("floor/sync-every=%d", group), func(b *testing.B) { benchFloor(b, group) })
	}
}

func benchPut(b *testing.B, cfg Config) {
	cfg.Dir, cfg.MaxSize, cfg.WhenFull = b.TempDir(), 256<<20, Block
	buf, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var workers sync.WaitGroup
	for range 4 { // an output's default workers: each takes a chunk and finishes it
		workers.Go(func() {
			for {
				c, err := buf.Get(ctx)
				if err != nil {
					return
				}
				buf.Done(c, 0)
			}
		})
	}
	payload := make([]byte, benchPayload)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	b.SetBytes(benchPayload)
	b.ReportAllocs()
	b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)) // 16 writers, as B5's clients
	cpu := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, err := buf.Put(ctx, payload, benchRecords, false)
			if err == nil {
				_, err = r.Wait(ctx)
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	if fs, ok := buf.(*filesystem); ok {
		b.ReportMetric(float64(fs.syncs.Load())/float64(b.N), "syncs/op")
	}
	cancel()
	workers.Wait()
	buf.Close()
}

// benchFloor writes payloads over a 4 MiB file that exists, one pwrite
// each, with an fdatasync every group of them (0: none).
func benchFloor(b *testing.B, group int) {
	const size = 4 << 20
	f, err := os.Create(filepath.Join(b.TempDir(), "floor"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, size)); err != nil {
		b.Fatal(err)
	}
	if err := syncData(f); err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, benchPayload)
	b.SetBytes(benchPayload)
	cpu := processCPU()
	b.ResetTimer()
	off := int64(0)
	for i := 0; i < b.N; i++ {
		if off+benchPayload > size {
			off = 0
		}
		if _, err := f.WriteAt(payload, off); err != nil {
			b.Fatal(err)
		}
		off += benchPayload
		if group > 0 && (i+1)%group == 0 {
			if err := syncData(f); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// processCPU is the user+sys CPU time of the process so far.
func processCPU() time.Duration {
	d, _ := rusage.CPU()
	return d
}
