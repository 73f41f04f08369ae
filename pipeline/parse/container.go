package parse

import (
	"bytes"
	"errors"
	"time"

	"github.com/policyrun/policyrun/record"
)

// dockerParser reads Docker's json-file lines,
// {"log":"...\n","stream":"stdout","time":"2026-11-29T21:00:00.123456789Z"}.
// As Fluent Bit's docker parser does, the time moves into the record's
// metadata and the time key is removed; a time that does not parse stays.
//
// Docker splits a long line (16 KiB) into entries whose log does not end
// in "\n"; as Fluent Bit's docker_mode and Vector do, they are joined with
// the entries after them up to the one that ends the line, per source and
// stream, exactly as the cri parser joins P parts: the record is the first
// entry's (its time, stream and other keys) with the joined log; a join
// that a part would take past maxJoined bytes is emitted as it is and the
// join starts again with that part; the pipeline flushes a join that waits
// longer than flush_timeout.
type dockerParser struct {
	pending   map[criKey]*dockerPending
	maxJoined int
	joins     uint64 // joins started, to tell them apart (Held)
}

type dockerPending struct {
	id    uint64
	first []byte // the first entry's line
	log   []byte // the joined log so far
}

func newDocker(maxJoined int) *dockerParser {
	if maxJoined <= 0 {
		maxJoined = DefaultMaxJoined
	}
	return &dockerParser{pending: map[criKey]*dockerPending{}, maxJoined: maxJoined}
}

var newline = []byte("\n")

func (p *dockerParser) Parse(a *record.Arena, source string, line []byte) (*record.Record, error) {
	r, err := a.DecodeJSON(line, record.Referenced)
	if err != nil {
		return unparsed(a, line, err)
	}
	v, ok := r.Get(pathLog)
	if !ok || v.Kind() != record.String {
		dockerTime(a, r)
		return r, nil // no log to join
	}
	msg := a.Bytes(v)
	partial := !bytes.HasSuffix(msg, newline)
	key := criKey{source: source}
	if s, ok := r.Get(pathStream); ok && s.Kind() == record.String {
		key.stderr = string(a.Bytes(s)) == "stderr"
	}
	if pend := p.pending[key]; pend != nil {
		if partial && len(pend.log)+len(msg) > p.maxJoined {
			// Emit what is joined so far and start again with this part.
			// (A last part is joined whatever its length: the tail bounds
			// each line, so the record passes maxJoined by one line at most.)
			out := pend.record(a)
			p.joins++
			pend.id = p.joins
			pend.first = append(pend.first[:0], line...)
			pend.log = append(pend.log[:0], msg...)
			return out, nil
		}
		pend.log = append(pend.log, msg...)
		if partial {
			return nil, nil
		}
		delete(p.pending, key)
		return pend.record(a), nil
	}
	if partial {
		p.joins++
		p.pending[key] = &dockerPending{id: p.joins, first: bytes.Clone(line), log: bytes.Clone(msg)}
		return nil, nil
	}
	dockerTime(a, r)
	return r, nil
}

// record makes the joined record: the first entry with the joined log.
func (pend *dockerPending) record(a *record.Arena) *record.Record {
	r, err := a.DecodeJSON(pend.first, record.Owned)
	if err != nil { // it decoded before
		r = a.NewRecord()
	}
	_ = r.Set(pathLog, a.NewString(pend.log))
	r.Commit()
	dockerTime(a, r)
	return r
}

// dockerTime moves a time key that parses into the record's time.
func dockerTime(a *record.Arena, r *record.Record) {
	if v, ok := r.Get(pathTime); ok {
		if k := v.Kind(); k == record.String || k == record.Bytes {
			if t, err := time.Parse(time.RFC3339Nano, string(a.Bytes(v))); err == nil {
				r.SetTime(t.UnixNano())
				r.Remove(pathTime)
				r.Commit()
			}
		}
	}
}

// Pending reports whether either stream of source holds parts.
func (p *dockerParser) Pending(source string) bool {
	return p.pending[criKey{source, false}] != nil || p.pending[criKey{source, true}] != nil
}

// Held returns the id of the older join source holds.
func (p *dockerParser) Held(source string) (uint64, bool) {
	var id uint64
	ok := false
	for _, key := range [...]criKey{{source, false}, {source, true}} {
		if pend := p.pending[key]; pend != nil && (!ok || pend.id < id) {
			id, ok = pend.id, true
		}
	}
	return id, ok
}

// Flush emits the join one stream of source holds, stdout first; call it
// until it returns nil.
func (p *dockerParser) Flush(a *record.Arena, source string) *record.Record {
	for _, key := range [...]criKey{{source, false}, {source, true}} {
		if pend := p.pending[key]; pend != nil {
			delete(p.pending, key)
			return pend.record(a)
		}
	}
	return nil
}

// criParser reads the CRI log format of containerd and CRI-O:
//
//	2026-11-29T21:00:00.123456789Z stdout F the message
//
// A line whose tag is P is the first part of a long line; the parts are
// joined until the F line of the same stream, and the record carries the
// first part's time. The runtime writes stdout and stderr into one file,
// so their parts interleave: each stream of a source is joined on its own.
// A join that a P part would take past maxJoined bytes is emitted as it is
// (logtag P) and the join starts again with that part, so a container that never ends its line cannot
// make the parser hold unbounded memory.
type criParser struct {
	pending   map[criKey]*criPending
	maxJoined int
	joins     uint64 // joins started, to tell them apart (Held)
}

type criKey struct {
	source string
	stderr bool
}

type criPending struct {
	id     uint64
	time   int64
	stream []byte
	log    []byte
}

func newCRI(maxJoined int) *criParser {
	if maxJoined <= 0 {
		maxJoined = DefaultMaxJoined
	}
	return &criParser{pending: map[criKey]*criPending{}, maxJoined: maxJoined}
}

var errCRI = errors.New("not a CRI log line (want: <RFC 3339 time> <stdout|stderr> <P|F> <message>)")

func (p *criParser) Parse(a *record.Arena, source string, line []byte) (*record.Record, error) {
	ts, stream, tag, msg, ok := splitCRI(line)
	if !ok {
		return unparsed(a, line, errCRI)
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return unparsed(a, line, errCRI)
	}
	partial := tag[0] == 'P'
	key := criKey{source: source, stderr: stream[3] == 'e'}
	if pend := p.pending[key]; pend != nil {
		if partial && len(pend.log)+len(msg) > p.maxJoined {
			// Emit what is joined so far and start again with this part.
			// (An F part is joined whatever the length: the tail bounds
			// each line, so the record passes maxJoined by one line at most.)
			r := criRecord(a, pend.time, pend.stream, pend.log, "P")
			p.joins++
			pend.id = p.joins
			pend.time = t.UnixNano()
			pend.log = append(pend.log[:0], msg...)
			return r, nil
		}
		pend.log = append(pend.log, msg...)
		if partial {
			return nil, nil
		}
		delete(p.pending, key)
		return criRecord(a, pend.time, pend.stream, pend.log, "F"), nil
	}
	if partial {
		p.joins++
		p.pending[key] = &criPending{
			id:     p.joins,
			time:   t.UnixNano(),
			stream: bytes.Clone(stream),
			log:    bytes.Clone(msg),
		}
		return nil, nil
	}
	return criRecord(a, t.UnixNano(), stream, msg, "F"), nil
}

// Pending reports whether either stream of source holds parts.
func (p *criParser) Pending(source string) bool {
	return p.pending[criKey{source, false}] != nil || p.pending[criKey{source, true}] != nil
}

// Held returns the id of the older join source holds.
func (p *criParser) Held(source string) (uint64, bool) {
	var id uint64
	ok := false
	for _, key := range [...]criKey{{source, false}, {source, true}} {
		if pend := p.pending[key]; pend != nil && (!ok || pend.id < id) {
			id, ok = pend.id, true
		}
	}
	return id, ok
}

// Flush emits the parts one stream of source holds, stdout first, with
// logtag P; call it until it returns nil.
func (p *criParser) Flush(a *record.Arena, source string) *record.Record {
	for _, key := range [...]criKey{{source, false}, {source, true}} {
		if pend := p.pending[key]; pend != nil {
			delete(p.pending, key)
			return criRecord(a, pend.time, pend.stream, pend.log, "P")
		}
	}
	return nil
}

func criRecord(a *record.Arena, t int64, stream, msg []byte, tag string) *record.Record {
	r := a.NewRecord()
	_ = r.Set(pathStream, a.NewString(stream))
	_ = r.Set(pathLogtag, a.NewStringFrom(tag))
	_ = r.Set(pathLog, a.NewString(msg))
	r.SetTime(t)
	r.Commit()
	return r
}

// splitCRI splits a CRI line into its four parts. The message may be empty.
func splitCRI(line []byte) (ts, stream, tag, msg []byte, ok bool) {
	i := bytes.IndexByte(line, ' ')
	if i <= 0 {
		return
	}
	ts, rest := line[:i], line[i+1:]
	j := bytes.IndexByte(rest, ' ')
	if j <= 0 {
		return
	}
	stream, rest = rest[:j], rest[j+1:]
	if !bytes.Equal(stream, []byte("stdout")) && !bytes.Equal(stream, []byte("stderr")) {
		return
	}
	k := bytes.IndexByte(rest, ' ')
	if k < 0 {
		tag, msg = rest, nil
	} else {
		tag, msg = rest[:k], rest[k+1:]
	}
	// The tag is P or F, possibly followed by ':'-separated extra tags.
	if len(tag) == 0 || (tag[0] != 'P' && tag[0] != 'F') || (len(tag) > 1 && tag[1] != ':') {
		return
	}
	return ts, stream, tag, msg, true
}
