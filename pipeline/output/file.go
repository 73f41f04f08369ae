package output

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/record"
)

// DefaultMaxFiles is how many rotated files a file output keeps, documented
// in docs/pipeline.md.
const DefaultMaxFiles = 5

// FileConfig is a file output's section.
type FileConfig struct {
	Path     string // the file to append to
	MaxSize  int64  // rotate when the file would pass this size; 0 = never
	MaxFiles int    // rotated files kept
}

func (c *FileConfig) Keys(v Values) map[string]func(*yaml.Node) {
	return map[string]func(*yaml.Node){
		"path":     func(n *yaml.Node) { c.Path = v.Str(n) },
		"max_size": func(n *yaml.Node) { c.MaxSize = v.Size(n) },
		"max_files": func(n *yaml.Node) {
			if c.MaxFiles = v.Int(n); c.MaxFiles < 1 {
				v.Errorf(n.Line, "max_files must be at least 1")
			}
		},
	}
}

func (c *FileConfig) Check(v Values, line int) {
	if c.Path == "" {
		v.Errorf(line, "output file needs path: the file to append records to")
	}
}

// File and Related make the config check the file against inputs, their
// checkpoint files and other outputs: every rotated name it may make
// (path.1 … path.MaxFiles) and its state file are its own too. An input
// path of logs/*.2 beside an output logs/o.txt read its second rotation
// back, each pass wrapping the lines in another layer of escaping.
func (c *FileConfig) File() string { return c.Path }

func (c *FileConfig) Related(path string) []string {
	names := make([]string, 0, c.MaxFiles+1)
	for i := 1; i <= max(c.MaxFiles, 1); i++ {
		names = append(names, path+"."+strconv.Itoa(i))
	}
	return append(names, StatePath(path))
}

func init() {
	Register(Factory{
		Name:        "file",
		NewSettings: func() Settings { return &FileConfig{MaxFiles: DefaultMaxFiles} },
		New: func(s Settings, env Env) (Output, error) {
			c := s.(*FileConfig)
			path := Resolve(env.Dir, c.Path)
			if env.Check {
				if err := CheckFile(path); err != nil {
					return nil, err
				}
				return &syncOutput{w: NewNull()}, nil
			}
			f, err := NewFile(path, c.MaxSize, c.MaxFiles)
			if err != nil {
				return nil, err
			}
			return &syncOutput{w: f}, nil
		},
	})
}

// Resolve is path relative to dir, the config's directory, unless it is
// absolute (or dir is empty).
func Resolve(dir, path string) string {
	if path == "" || filepath.IsAbs(path) || dir == "" {
		return path
	}
	return filepath.Join(dir, path)
}

// File appends JSON lines to a file. When MaxSize is set and a batch would
// take the file past it, the file is rotated first: path.N-1 becomes path.N,
// …, path becomes path.1, and at most MaxFiles rotated files are kept. A
// single batch larger than MaxSize still goes whole into one file.
type File struct {
	counts
	path     string
	maxSize  int64
	maxFiles int

	f        *os.File
	dev, ino uint64   // of f
	state    *os.File // see StatePath; nil until the first batch, or when it cannot be written
	w        *bufio.Writer
	size     int64
	buf      []byte
	line     []byte
}

// NewFile opens (creating if needed) the file at path for appending.
func NewFile(path string, maxSize int64, maxFiles int) (*File, error) {
	f := &File{path: path, maxSize: maxSize, maxFiles: maxFiles}
	if err := f.open(); err != nil {
		return nil, err
	}
	return f, nil
}

// CheckFile reports whether NewFile could open path, without creating or
// changing anything (policyrun run --check): an existing file must open
// for appending, a new one needs its directory.
func CheckFile(path string) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		return fh.Close()
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("output file: %w", err)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("output file: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("output file: %s is not a directory", dir)
	}
	return nil
}

func (f *File) Name() string { return "file" }

func (f *File) open() error {
	fh, err := os.OpenFile(f.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("output file: %w", err)
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return fmt.Errorf("output file: %w", err)
	}
	size, err := f.endPartialLine(fh, st)
	if err != nil {
		fh.Close()
		return fmt.Errorf("output file: %w", err)
	}
	f.f, f.size = fh, size
	if f.w == nil {
		f.w = bufio.NewWriterSize(fh, 64<<10)
	} else {
		f.w.Reset(fh)
	}
	return nil
}

func (f *File) Write(recs []*record.Record) error {
	// Encode the batch first so that rotation can happen before it.
	f.buf = f.buf[:0]
	for _, r := range recs {
		f.buf = r.AppendJSON(f.buf)
		f.buf = append(f.buf, '\n')
	}
	if f.maxSize > 0 && f.size > 0 && f.size+int64(len(f.buf)) > f.maxSize {
		if err := f.rotate(); err != nil {
			return err
		}
	}
	f.noteBatch(len(f.buf))
	if _, err := f.w.Write(f.buf); err != nil {
		return err
	}
	if err := f.w.Flush(); err != nil {
		return err
	}
	f.size += int64(len(f.buf))
	f.records.Add(int64(len(recs)))
	f.bytes.Add(int64(len(f.buf)))
	return nil
}

func (f *File) rotate() error {
	if err := f.w.Flush(); err != nil {
		return err
	}
	if err := f.f.Close(); err != nil {
		return err
	}
	keep := max(f.maxFiles, 1)
	os.Remove(f.path + "." + strconv.Itoa(keep))
	for i := keep - 1; i >= 1; i-- {
		os.Rename(f.path+"."+strconv.Itoa(i), f.path+"."+strconv.Itoa(i+1))
	}
	if err := os.Rename(f.path, f.path+".1"); err != nil {
		return fmt.Errorf("rotate: %w", err)
	}
	return f.open()
}

func (f *File) Close() error {
	if f.state != nil {
		f.state.Close()
	}
	if err := f.w.Flush(); err != nil {
		f.f.Close()
		return err
	}
	return f.f.Close()
}

// StatePath is the file in which the output at path notes, before each
// batch, which file it writes (device, inode) and the bytes the batch is to
// take (from, to), so that the next open can tell a partial last line of
// its own (a kill in the middle of a write) from someone else's. It is
// hidden next to path.
func StatePath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".policyrun-state")
}

// noteBatch records in the state file that a batch of n bytes is about to
// go at f.size of the open file. It is best effort: without it, the next
// open only ends a partial line instead of cutting it.
func (f *File) noteBatch(n int) {
	if f.state == nil {
		st, err := os.OpenFile(StatePath(f.path), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return
		}
		f.state = st
	}
	var b [stateSize]byte
	binary.BigEndian.PutUint64(b[0:], f.dev)
	binary.BigEndian.PutUint64(b[8:], f.ino)
	binary.BigEndian.PutUint64(b[16:], uint64(f.size))
	binary.BigEndian.PutUint64(b[24:], uint64(f.size+int64(n)))
	if _, err := f.state.WriteAt(b[:], 0); err != nil {
		f.state.Close()
		f.state = nil
	}
}

// endPartialLine deals with a last line that has no newline. If the state
// file says this output was writing a batch into this very file, and the
// file ends inside the bytes that batch was to take, the line is this
// output's, cut short by a kill: it is cut (its batch was never
// checkpointed, so the next run delivers it again, whole). Otherwise the file may be someone else's
// (a log without a final newline, or one long line): nothing is cut, the
// line is ended with a newline so that what is appended starts a line.
func (f *File) endPartialLine(fh *os.File, fi os.FileInfo) (int64, error) {
	size := fi.Size()
	f.dev, f.ino = fileID(fi)
	if size == 0 {
		return 0, nil
	}
	var last [1]byte
	if _, err := fh.ReadAt(last[:], size-1); err != nil {
		return 0, err
	}
	if last[0] == '\n' {
		return size, nil
	}
	if start, end, ok := f.lastBatch(); ok && start < size && size < end {
		tail := make([]byte, size-start)
		if _, err := fh.ReadAt(tail, start); err != nil {
			return 0, err
		}
		// The partial line starts after the last newline, or at start
		// when the batch wrote none (the byte before start ended a line
		// or the file was empty: a batch starts on a line).
		end := start + int64(bytes.LastIndexByte(tail, '\n')+1)
		return end, fh.Truncate(end)
	}
	if _, err := fh.Write([]byte{'\n'}); err != nil { // O_APPEND: at the end
		return 0, err
	}
	return size + 1, nil
}

const stateSize = 32

// lastBatch reads the state file: the bytes this output's last batch into
// the file it has open (f.dev, f.ino) was to take.
func (f *File) lastBatch() (start, end int64, ok bool) {
	b, err := os.ReadFile(StatePath(f.path))
	if err != nil || len(b) != stateSize {
		return 0, 0, false
	}
	dev, ino := binary.BigEndian.Uint64(b[0:]), binary.BigEndian.Uint64(b[8:])
	start, end = int64(binary.BigEndian.Uint64(b[16:])), int64(binary.BigEndian.Uint64(b[24:]))
	if dev != f.dev || ino != f.ino || (dev == 0 && ino == 0) || start < 0 || end < start {
		return 0, 0, false
	}
	return start, end, true
}
