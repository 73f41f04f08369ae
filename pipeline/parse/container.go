package parse

import (
	"bytes"
	"errors"
	"time"

	"github.com/policyrun/policyrun/record"
)

// joiner joins the parts of long container log lines, per source and
// stream: the docker parser's entries without a final "\n" and the cri
// parser's P parts. A join ends with the part that ends the line; a join
// that a part would take past maxJoined bytes is emitted as it is and the
// join starts again with that part, so a container that never ends its
// line cannot make the parser hold unbounded memory. The pipeline flushes
// a join that waits longer than flush_timeout.
type joiner struct {
	pending   map[criKey]*joinPending
	maxJoined int
	joins     uint64 // joins started, to tell them apart (Held)
	// emit makes the record of a join: whole when the last part is in it,
	// not when it is cut at maxJoined or flushed.
	emit func(a *record.Arena, pend *joinPending, whole bool) *record.Record
}

type criKey struct {
	source string
	stderr bool
}

// joinPending is a join in progress: the first part's time and head (what
// its parser keeps of it besides the log) and the log joined so far.
type joinPending struct {
	id   uint64
	time int64
	head []byte
	log  []byte
}

func newJoiner(maxJoined int, emit func(*record.Arena, *joinPending, bool) *record.Record) joiner {
	if maxJoined <= 0 {
		maxJoined = DefaultMaxJoined
	}
	return joiner{pending: map[criKey]*joinPending{}, maxJoined: maxJoined, emit: emit}
}

// join takes a part of a line on key's stream, with the part's time, head
// and log; partial says the line goes on in a later part. It returns the
// record of a join the part ends or cuts, if any, and whether the part was
// taken into a join: when not, the part is a whole line of its own and the
// caller makes its record.
func (j *joiner) join(a *record.Arena, key criKey, partial bool, time int64, head, msg []byte) (*record.Record, bool) {
	if pend := j.pending[key]; pend != nil {
		if partial && len(pend.log)+len(msg) > j.maxJoined {
			// Emit what is joined so far and start again with this part.
			// (A last part is joined whatever its length: the tail bounds
			// each line, so the record passes maxJoined by one line at most.)
			out := j.emit(a, pend, false)
			j.joins++
			pend.id = j.joins
			pend.time = time
			pend.head = append(pend.head[:0], head...)
			pend.log = append(pend.log[:0], msg...)
			return out, true
		}
		pend.log = append(pend.log, msg...)
		if partial {
			return nil, true
		}
		delete(j.pending, key)
		return j.emit(a, pend, true), true
	}
	if partial {
		j.joins++
		j.pending[key] = &joinPending{id: j.joins, time: time, head: bytes.Clone(head), log: bytes.Clone(msg)}
		return nil, true
	}
	return nil, false
}

// Pending reports whether either stream of source holds parts.
func (j *joiner) Pending(source string) bool {
	return j.pending[criKey{source, false}] != nil || j.pending[criKey{source, true}] != nil
}

// Held returns the id of the older join source holds.
func (j *joiner) Held(source string) (uint64, bool) {
	var id uint64
	ok := false
	for _, key := range [...]criKey{{source, false}, {source, true}} {
		if pend := j.pending[key]; pend != nil && (!ok || pend.id < id) {
			id, ok = pend.id, true
		}
	}
	return id, ok
}

// Flush emits the join one stream of source holds, stdout first (the cri
// parser's with logtag P); call it until it returns nil.
func (j *joiner) Flush(a *record.Arena, source string) *record.Record {
	for _, key := range [...]criKey{{source, false}, {source, true}} {
		if pend := j.pending[key]; pend != nil {
			delete(j.pending, key)
			return j.emit(a, pend, false)
		}
	}
	return nil
}

// dockerParser reads Docker's json-file lines,
// {"log":"...\n","stream":"stdout","time":"2026-11-29T21:00:00.123456789Z"}.
// As Fluent Bit's docker parser does, the time moves into the record's
// metadata and the time key is removed; a time that does not parse stays.
//
// Docker splits a long line (16 KiB) into entries whose log does not end
// in "\n"; as Fluent Bit's docker_mode and Vector do, they are joined with
// the entries after them up to the one that ends the line, per source and
// stream, exactly as the cri parser joins P parts (see joiner): the record
// is the first entry's (its time, stream and other keys) with the joined
// log.
type dockerParser struct {
	joiner
}

func newDocker(maxJoined int) *dockerParser {
	return &dockerParser{newJoiner(maxJoined, dockerRecord)}
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
	if out, joined := p.join(a, key, partial, 0, line, msg); joined {
		return out, nil
	}
	dockerTime(a, r)
	return r, nil
}

// dockerRecord makes the joined record: the first entry (the join's head)
// with the joined log.
func dockerRecord(a *record.Arena, pend *joinPending, _ bool) *record.Record {
	r, err := a.DecodeJSON(pend.head, record.Owned)
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

// criParser reads the CRI log format of containerd and CRI-O:
//
//	2026-11-29T21:00:00.123456789Z stdout F the message
//
// A line whose tag is P is the first part of a long line; the parts are
// joined until the F line of the same stream (see joiner), and the record
// carries the first part's time. The runtime writes stdout and stderr into
// one file, so their parts interleave: each stream of a source is joined on
// its own. A join cut at maxJoined, or flushed, is emitted with logtag P.
type criParser struct {
	joiner
}

func newCRI(maxJoined int) *criParser {
	return &criParser{newJoiner(maxJoined, func(a *record.Arena, pend *joinPending, whole bool) *record.Record {
		tag := "P"
		if whole {
			tag = "F"
		}
		return criRecord(a, pend.time, pend.head, pend.log, tag)
	})}
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
	key := criKey{source: source, stderr: stream[3] == 'e'}
	if out, joined := p.join(a, key, tag[0] == 'P', t.UnixNano(), stream, msg); joined {
		return out, nil
	}
	return criRecord(a, t.UnixNano(), stream, msg, "F"), nil
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
