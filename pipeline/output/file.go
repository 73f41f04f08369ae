package output

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/policyrun/policyrun/record"
)

// File appends JSON lines to a file. When MaxSize is set and a batch would
// take the file past it, the file is rotated first: path.N-1 becomes path.N,
// …, path becomes path.1, and at most MaxFiles rotated files are kept. A
// single batch larger than MaxSize still goes whole into one file.
type File struct {
	counts
	path     string
	maxSize  int64
	maxFiles int

	f    *os.File
	w    *bufio.Writer
	size int64
	buf  []byte
	line []byte
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
	size, err := trimPartialLine(fh, st.Size())
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
	if err := f.w.Flush(); err != nil {
		f.f.Close()
		return err
	}
	return f.f.Close()
}

// trimPartialLine cuts a last line that has no newline: a process killed in
// the middle of a write leaves one. Its batch was never checkpointed, so the
// next run delivers it again, whole; without the cut the file would hold a
// corrupt line.
func trimPartialLine(fh *os.File, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	end := size
	for end > 0 {
		start := max(end-int64(len(buf)), 0)
		chunk := buf[:end-start]
		if _, err := fh.ReadAt(chunk, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			end = start + int64(i) + 1
			break
		}
		end = start
	}
	if end == size {
		return size, nil
	}
	return end, fh.Truncate(end)
}
