package parse

import (
	"bytes"
	"errors"
	"time"

	"github.com/policyrun/policyrun/pipeline/tail"
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
// stream, exactly as the cri parser joins P parts (see joiner): the record
// is the first entry's (its time, stream and other keys) with the joined
// log. Multiline rules join the logs of whole lines the same way.
type dockerParser struct {
	joiner
}

func newDocker(maxJoined int, ml *multiline) *dockerParser {
	p := &dockerParser{newJoiner(maxJoined, ml, dockerRecord)}
	p.ownNewlines = true
	return p
}

var newline = []byte("\n")

func (p *dockerParser) Parse(a *record.Arena, out []*record.Record, source string, line []byte, at tail.Mark) ([]*record.Record, error) {
	r, err := a.DecodeJSON(line, record.Referenced)
	if err != nil {
		r, err = unparsed(a, line, err)
		return append(out, r), err
	}
	v, ok := r.Get(pathLog)
	if !ok || v.Kind() != record.String {
		dockerTime(a, r)
		return append(out, r), nil // no log to join
	}
	msg := a.Bytes(v)
	partial := !bytes.HasSuffix(msg, newline)
	key := streamKey{source: source}
	if s, ok := r.Get(pathStream); ok && s.Kind() == record.String {
		key.stderr = string(a.Bytes(s)) == "stderr"
	}
	out, taken := p.take(a, out, key, partial, 0, line, msg, at)
	if taken {
		return out, nil
	}
	dockerTime(a, r)
	return append(out, r), nil
}

// dockerRecord makes a joined record: the first entry (the join's head)
// with the joined log.
func dockerRecord(a *record.Arena, _ int64, head, log []byte, _ bool) *record.Record {
	r, err := a.DecodeJSON(head, record.Owned)
	if err != nil { // it decoded before
		r = a.NewRecord()
	}
	_ = r.Set(pathLog, a.NewString(log))
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
// its own. A join cut at maxJoined, or flushed, is emitted with logtag P,
// and so is a multiline record with such a line in it.
type criParser struct {
	joiner
}

func newCRI(maxJoined int, ml *multiline) *criParser {
	return &criParser{newJoiner(maxJoined, ml, func(a *record.Arena, t int64, stream, log []byte, whole bool) *record.Record {
		tag := "P"
		if whole {
			tag = "F"
		}
		return criRecord(a, t, stream, log, tag)
	})}
}

var errCRI = errors.New("not a CRI log line (want: <RFC 3339 time> <stdout|stderr> <P|F> <message>)")

func (p *criParser) Parse(a *record.Arena, out []*record.Record, source string, line []byte, at tail.Mark) ([]*record.Record, error) {
	ts, stream, tag, msg, ok := splitCRI(line)
	if !ok {
		r, err := unparsed(a, line, errCRI)
		return append(out, r), err
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		r, err := unparsed(a, line, errCRI)
		return append(out, r), err
	}
	key := streamKey{source: source, stderr: stream[3] == 'e'}
	out, taken := p.take(a, out, key, tag[0] == 'P', t.UnixNano(), stream, msg, at)
	if taken {
		return out, nil
	}
	return append(out, criRecord(a, t.UnixNano(), stream, msg, "F")), nil
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
