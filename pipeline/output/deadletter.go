package output

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/internal/durable"
)

// The dead-letter directory of a buffered output with a filesystem buffer
// (dead_letter: {path, max_size}, as Fluent Bit's storage.keep.rejected):
// a request its receiver refused for good (400, 413, 500 …), or whose
// retries ran out, is written there rather than dropped — the input
// acknowledged its records — counted and logged; `policyrun replay`
// sends the files again.

// DefaultDeadLetterMaxSize bounds a dead-letter directory by default.
const DefaultDeadLetterMaxSize = 256 << 20

// DeadLetterConfig is dead_letter.*.
type DeadLetterConfig struct {
	Path     string // the directory, relative to the config's; "" for none
	MaxSize  int64
	line     int // of path
	sizeLine int // of max_size, when given
}

func (c *DeadLetterConfig) keys(keys map[string]func(*yaml.Node), v Values) {
	nested(keys, v, "dead_letter", map[string]func(*yaml.Node){
		"path": func(n *yaml.Node) { c.Path, c.line = v.Str(n), n.Line },
		"max_size": func(n *yaml.Node) {
			c.sizeLine = n.Line
			if c.MaxSize = v.Size(n); c.MaxSize <= 0 {
				v.Errorf(n.Line, "dead_letter.max_size must be more than 0")
			}
		},
	})
}

func (c *DeadLetterConfig) check(v Values, line int, buf BufferConfig) {
	if c.Path == "" {
		if c.sizeLine > 0 {
			v.Errorf(c.sizeLine, "dead_letter needs path: the directory to keep refused requests in")
		}
		return
	}
	if buf.Type != "filesystem" {
		v.Errorf(c.line, "dead_letter is for buffer.type filesystem: a memory buffer keeps nothing across a crash either")
	}
}

// deadLetterExt names the files of a dead-letter directory, and a file's
// name then deadLetterTemp its temporary file while it is written.
const (
	deadLetterExt  = ".dead"
	deadLetterTemp = ".tmp"
)

// deadLetterMagic starts each file: the format's name and version.
var deadLetterMagic = []byte("PRDL1\n")

// deadLetter writes refused requests into its directory, one file each:
// the magic, the records (uvarint), the body's CRC-32C (4 bytes, little
// endian), then the body as the output sends it (before compression).
type deadLetter struct {
	dir string
	max int64

	mu   sync.Mutex
	size int64 // of the files in dir
	seq  uint64
}

func openDeadLetter(dir string, max int64) (*deadLetter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("dead_letter: %w", err)
	}
	d := &deadLetter{dir: dir, max: max}
	// A file a crash left half written was never acknowledged as kept.
	if tmps, err := filepath.Glob(filepath.Join(dir, "*"+deadLetterExt+deadLetterTemp+"*")); err == nil {
		for _, t := range tmps {
			os.Remove(t)
		}
	}
	if err := d.measure(); err != nil {
		return nil, err
	}
	return d, nil
}

// measure sets size to what the directory's files hold now: policyrun
// replay, another process, removes the files it delivers.
func (d *deadLetter) measure() error {
	names, err := deadLetterFiles(d.dir)
	if err != nil {
		return err
	}
	d.size = 0
	for _, name := range names {
		if fi, err := os.Stat(filepath.Join(d.dir, name)); err == nil {
			d.size += fi.Size()
		}
	}
	return nil
}

var errDeadLetterFull = errors.New("the dead-letter directory is at its max_size")

// put writes one refused request durably (written, synced, renamed into
// place, the directory synced).
func (d *deadLetter) put(body []byte, records int64) (string, error) {
	var hdr []byte
	hdr = append(hdr, deadLetterMagic...)
	hdr = binary.AppendUvarint(hdr, uint64(records))
	hdr = binary.LittleEndian.AppendUint32(hdr, crc32.Checksum(body, castagnoli))
	n := int64(len(hdr) + len(body))
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.size+n > d.max {
		// Measured again before it says no: a replay may have emptied it.
		if d.measure(); d.size+n > d.max {
			return "", errDeadLetterFull
		}
	}
	d.seq++
	name := fmt.Sprintf("%d-%06d%s", time.Now().UnixNano(), d.seq, deadLetterExt)
	path := filepath.Join(d.dir, name)
	// Once renamed the file is kept, and replay finds it: an error syncing
	// the directory must not have the caller count its records lost too.
	var dirSync *durable.DirSyncError
	if err := durable.WriteFile(path, name+deadLetterTemp, 0o644, hdr, body); err != nil && !errors.As(err, &dirSync) {
		return "", err
	}
	d.size += n
	return path, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// deadLetterFiles lists a directory's dead-letter files, oldest first.
func deadLetterFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("dead_letter: %w", err)
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), deadLetterExt) {
			names = append(names, e.Name())
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		// By the nanoseconds before the dash, then by name.
		na, _ := strconv.ParseInt(a[:max(strings.IndexByte(a, '-'), 0)], 10, 64)
		nb, _ := strconv.ParseInt(b[:max(strings.IndexByte(b, '-'), 0)], 10, 64)
		if na != nb {
			return int(min(max(na-nb, -1), 1))
		}
		return strings.Compare(a, b)
	})
	return names, nil
}

// readDeadLetter reads one dead-letter file: its records and its body.
func readDeadLetter(path string) (records int64, body []byte, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	if len(b) < len(deadLetterMagic) || string(b[:len(deadLetterMagic)]) != string(deadLetterMagic) {
		return 0, nil, fmt.Errorf("%s: not a dead-letter file", path)
	}
	b = b[len(deadLetterMagic):]
	n, k := binary.Uvarint(b)
	if k <= 0 || len(b) < k+4 {
		return 0, nil, fmt.Errorf("%s: a damaged header", path)
	}
	sum := binary.LittleEndian.Uint32(b[k:])
	body = b[k+4:]
	if crc32.Checksum(body, castagnoli) != sum {
		return 0, nil, fmt.Errorf("%s: its checksum does not match: damaged", path)
	}
	return int64(n), body, nil
}

// ReplayStats is what a replay of a dead-letter directory did.
type ReplayStats struct {
	Files, Records int64 // sent and removed
	Left           int64 // files still there: refused again, damaged, or not reached
}

// A Replayer is an output that can send its dead-letter files again.
type Replayer interface {
	// DeadLetterDir is the output's dead-letter directory, resolved; ""
	// when it has none.
	DeadLetterDir() string
	// Replay sends the files of the dead-letter directory, oldest first,
	// each with the output's retries (a file still refused for good is
	// left, and the next tried), removing each one delivered. It stops
	// when ctx ends.
	Replay(ctx context.Context, log *slog.Logger) (ReplayStats, error)
}

// DeadLetterDir implements Replayer.
func (o *buffered) DeadLetterDir() string { return o.deadDir }

// Replay implements Replayer.
func (o *buffered) Replay(ctx context.Context, log *slog.Logger) (ReplayStats, error) {
	var st ReplayStats
	if o.deadDir == "" {
		return st, errors.New("the output has no dead_letter directory")
	}
	names, err := deadLetterFiles(o.deadDir)
	if err != nil {
		return st, err
	}
	for i, name := range names {
		path := filepath.Join(o.deadDir, name)
		records, body, err := readDeadLetter(path)
		if err != nil {
			log.Error("a dead-letter file cannot be read; left where it is", "err", err)
			st.Left++
			continue
		}
		r := o.sendRetrying(ctx, body)
		if r.kind != delivered && ctx.Err() != nil {
			st.Left += int64(len(names) - i)
			return st, ctx.Err()
		}
		if r.kind != delivered {
			log.Error("a dead-letter file was refused again; left where it is", "file", path, "records", records, "msg", r.msg)
			st.Left++
			continue
		}
		if r.rejected > 0 {
			log.Warn("the receiver rejected part of a dead-letter file", "file", path, "rejected", r.rejected, "records", records, "msg", r.msg)
		}
		if err := os.Remove(path); err != nil {
			return st, err
		}
		st.Files++
		st.Records += records - min(r.rejected, records)
	}
	return st, nil
}

// sendRetrying sends body until it is delivered, refused for good, or its
// retries run out (retry.max_elapsed; for ever when 0), as deliver does.
func (o *buffered) sendRetrying(ctx context.Context, body []byte) sendResult {
	start := time.Now()
	for attempt := 0; ; attempt++ {
		r := o.send.send(ctx, body)
		if r.kind != retryable || ctx.Err() != nil {
			return r
		}
		delay, ok := o.nextTry(r, attempt, start)
		if !ok || !Sleep(ctx, delay) {
			return r
		}
	}
}
