package checkpoint

import (
	"fmt"
	"testing"
)

// benchCheckpoint builds the B4 data: n files under /var/log/containers,
// each with a 1,000-byte fingerprint of log text and five attributes.
// Container log paths are symlinks, so the resolved path differs from the
// path, as it does for a tail on a Kubernetes node.
func benchCheckpoint(n int) *Checkpoint {
	c := &Checkpoint{Files: make([]File, n)}
	for i := range c.Files {
		var fp []byte
		for j := 0; len(fp) < 1000; j++ {
			fp = fmt.Appendf(fp, `{"time":"2026-11-29T21:00:%02d.%06dZ","level":"info","msg":"request %d served","file":%d}`+"\n", j%60, i*1000+j, j, i)
		}
		pod := fmt.Sprintf("api-%05d-7d9f8b6c5d-x%03dz", i, i%1000)
		uid := fmt.Sprintf("0f1e2d3c-4b5a-6978-8796-%012x", i)
		cid := fmt.Sprintf("%064x", uint64(i)*0x9e3779b97f4a7c15)
		path := fmt.Sprintf("/var/log/containers/%s_default_api-%s.log", pod, cid)
		resolved := fmt.Sprintf("/var/log/pods/default_%s_%s/api/0.log", pod, uid)
		c.Files[i] = File{
			Fingerprint: fp[:1000],
			Offset:      int64(i)*7919 + 123456,
			RecordNum:   int64(i)*31 + 1000,
			Path:        path,
			Dev:         2049,
			Inode:       uint64(1_000_000 + i),
			Attributes: []Attr{
				{AttrFileName, base(path)},
				{AttrFilePath, path},
				{AttrFileNameResolved, "0.log"},
				{AttrFilePathResolved, resolved},
				{AttrFileOwnerName, "root"},
			},
		}
	}
	return c
}

// written is Memory that counts the bytes handed to it.
type written struct {
	Memory
	bytes int
}

func (w *written) Store(data []byte) error {
	w.bytes += len(data)
	return w.Memory.Store(data)
}

func (w *written) Append(data []byte) error {
	w.bytes += len(data)
	return w.Memory.Append(data)
}

// BenchmarkCheckpoint is B4. save: every file moved since the last save,
// the busiest poll cycle; JSON rewrites the file, protobuf appends a frame
// of every file (their fingerprints left out) and rewrites the log when it
// reaches twice its snapshot. save1: 1 file of n moved. snapshot: the
// whole-log rewrite of protobuf, which the first save and a compaction
// write (JSON's is its save). load: read a checkpoint that is one
// snapshot. bytes/checkpoint is the size of that snapshot; written-B/save
// is what a save hands to the storage, on average.
func BenchmarkCheckpoint(b *testing.B) {
	sizes := []int{1, 10, 100, 1000}
	formats := []Format{JSON, Protobuf}
	for _, op := range []string{"save", "save1", "snapshot", "load"} {
		for _, f := range formats {
			if op == "snapshot" && f == JSON {
				continue
			}
			for _, n := range sizes {
				if op == "save1" && n != 1000 {
					continue
				}
				c := benchCheckpoint(n)
				b.Run(fmt.Sprintf("%s/%s/files=%d", op, f, n), func(b *testing.B) {
					var mem written
					st := NewStore(&mem)
					st.SetFormat(f)
					if err := st.Save(c); err != nil {
						b.Fatal(err)
					}
					size := len(mem.data)
					mem.bytes = 0
					b.ReportAllocs()
					b.ResetTimer()
					switch op {
					case "save", "save1":
						for i := range b.N {
							if op == "save" {
								for j := range c.Files {
									c.Files[j].Offset++
								}
							} else {
								c.Files[i%n].Offset++
							}
							if err := st.Save(c); err != nil {
								b.Fatal(err)
							}
						}
					case "snapshot":
						for range b.N {
							if err := st.rewrite(c); err != nil {
								b.Fatal(err)
							}
						}
					case "load":
						for range b.N {
							got, _, err := st.Load()
							if err != nil || len(got.Files) != n {
								b.Fatal(err)
							}
						}
					}
					b.ReportMetric(float64(size), "bytes/checkpoint")
					if op != "load" {
						b.ReportMetric(float64(mem.bytes)/float64(b.N), "written-B/save")
					}
				})
			}
		}
	}
}
