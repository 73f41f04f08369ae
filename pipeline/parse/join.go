package parse

import (
	"bytes"

	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/record"
)

// joiner holds lines back, per source and stream, until what they belong
// to is whole: the parts of one long container line (the docker parser's
// entries without a final "\n", the cri parser's P parts, joined until the
// part that ends the line) and, with multiline rules, the lines of one
// record (a stack trace). It is the one place a parser keeps lines between
// calls, so Held covers both: the pipeline times them and keeps its
// checkpoint before them alike.
//
// A join that a part would take past maxJoined bytes, or a record that a
// line would take past maxJoined bytes or maxLines lines, is emitted as it
// is and starts again with that part or line: a container that never ends
// its line, or a trace that never ends, cannot make the parser hold
// unbounded memory. (A last part is joined whatever its length: the tail
// bounds each line, so a line passes maxJoined by one part at most.)
type joiner struct {
	streams   map[streamKey]*stream // only streams that hold something
	spare     []*stream
	maxJoined int
	ml        *multiline // nil without multiline rules
	// taken numbers the parts and lines taken (hold.seq, hold.wait).
	taken uint64
	// emit makes the record of a join from its first line's time and head
	// (what its parser keeps of it besides the log) and the joined log;
	// whole says no line in it was cut at maxJoined or flushed before its
	// last part.
	emit func(a *record.Arena, time int64, head, log []byte, whole bool) *record.Record
	// ownNewlines: each log ends in its own "\n" (docker's), so lines are
	// joined as they are; other logs are joined with "\n" between them.
	ownNewlines bool
}

type streamKey struct {
	source string
	stderr bool
}

// stream is what one stream of one source holds.
type stream struct {
	part hold // the parts of one line so far
	rec  hold // a multiline record
	// trial is a line the record took on trial (verdict try): it joins
	// the record if the line after it does, and is given back otherwise.
	trial hold
	rule  *Rule // the rule whose start began rec, and its state
	state uint8
}

// A hold is lines, or parts of a line, that a stream holds back.
type hold struct {
	on    bool
	time  int64
	head  []byte
	log   []byte
	whole bool
	lines int
	first tail.Mark // where its first line starts
	seq   uint64    // the number of its first part (joiner.taken)
	wait  uint64    // the number of the last part it took: its wait runs from there
}

// A line is a whole line (or what is left of one that was cut) on its way
// to the multiline rules. made says the joiner makes its record (it was
// joined from parts, or given back), not the caller.
type line struct {
	time  int64
	head  []byte
	log   []byte
	whole bool
	made  bool
	first tail.Mark
	seq   uint64
}

// maxSpareBuffer is the largest buffer a released stream keeps for reuse:
// one runaway trace must not pin maxJoined bytes for the rest of the run.
const maxSpareBuffer = 64 << 10

func newJoiner(maxJoined int, ml *multiline, emit func(*record.Arena, int64, []byte, []byte, bool) *record.Record) joiner {
	if maxJoined <= 0 {
		maxJoined = DefaultMaxJoined
	}
	return joiner{streams: map[streamKey]*stream{}, maxJoined: maxJoined, ml: ml, emit: emit}
}

// take takes a part of a line on key's stream, with the part's time, head
// and log, read at at; partial says the line goes on in a later part. It
// appends to out the records the part completes (a joined line, a record
// it ends), and reports whether it took the part: when not, the part is a
// whole line of its own that nothing holds, and the caller appends its
// record. That is the way of every line when nothing is held and no rule
// starts a record with it: the rules' start tests, and a map lookup if
// another stream holds something.
func (j *joiner) take(a *record.Arena, out []*record.Record, key streamKey, partial bool, time int64, head, msg []byte, at tail.Mark) ([]*record.Record, bool) {
	var st *stream
	if len(j.streams) > 0 {
		st = j.streams[key]
	}
	if st == nil {
		if !partial && (j.ml == nil || !j.ml.starts(j.text(msg))) {
			return out, false
		}
		st = j.stream(key)
	}
	j.taken++
	l := line{time: time, head: head, log: msg, whole: true, first: at, seq: j.taken}
	taken := true
	switch {
	case st.part.on && partial && len(st.part.log)+len(msg) > j.maxJoined:
		// What is joined so far goes on as a line, cut; the join starts
		// again with this part.
		out, _ = j.toRules(a, out, st, st.part.line(false))
		st.part.begin(l, j.taken)
	case st.part.on:
		st.part.log = append(st.part.log, msg...)
		st.part.wait = j.taken
		if !partial {
			st.part.on = false
			out, _ = j.toRules(a, out, st, st.part.line(true))
		}
	case partial:
		st.part.begin(l, j.taken)
	default:
		out, taken = j.toRules(a, out, st, l)
	}
	j.settle(key, st)
	return out, taken
}

// toRules hands a whole line to the multiline rules, which join it to the
// record held, or end that record and begin one with the line, or leave
// it alone. It appends what they complete and reports whether the line
// was taken (joined, or made into a record here).
func (j *joiner) toRules(a *record.Arena, out []*record.Record, st *stream, l line) ([]*record.Record, bool) {
	if j.ml == nil {
		if l.made {
			return append(out, j.emit(a, l.time, l.head, l.log, l.whole)), true
		}
		return out, false
	}
	text := j.text(l.log)
	if st.rec.on {
		v, next := st.rule.m.next(st.state, text)
		switch v {
		case join:
			out = j.confirmTrial(a, out, st)
			out = j.add(a, out, st, l)
			st.state = next
			return out, true
		case try:
			out = j.confirmTrial(a, out, st)
			st.trial.begin(l, j.taken)
			st.rec.wait = j.taken
			st.state = next
			return out, true
		}
		out = append(out, j.emitHold(a, &st.rec))
		if st.trial.on {
			// Given back: the line goes through the rules as if the record
			// had ended before it, and l meets what it began, if anything.
			st.trial.on = false
			out, _ = j.toRules(a, out, st, st.trial.line(st.trial.whole))
			if st.rec.on {
				return j.toRules(a, out, st, l)
			}
		}
	}
	if rule, state, ok := j.ml.start(text); ok {
		st.rec.begin(l, j.taken)
		st.rule, st.state = rule, state
		return out, true
	}
	if l.made {
		return append(out, j.emit(a, l.time, l.head, l.log, l.whole)), true
	}
	return out, false
}

// confirmTrial joins the line taken on trial, if any, to the record.
func (j *joiner) confirmTrial(a *record.Arena, out []*record.Record, st *stream) []*record.Record {
	if !st.trial.on {
		return out
	}
	st.trial.on = false
	return j.add(a, out, st, st.trial.line(st.trial.whole))
}

// add joins l to the record, or, when that would take the record past
// maxLines or maxJoined, emits the record and begins the next with l: the
// trace goes on in it, with the same rule and state.
func (j *joiner) add(a *record.Arena, out []*record.Record, st *stream, l line) []*record.Record {
	r := &st.rec
	if r.lines >= j.ml.maxLines || len(r.log)+1+len(l.log) > j.maxJoined {
		out = append(out, j.emitHold(a, r))
		r.begin(l, j.taken)
		return out
	}
	if !j.ownNewlines || !bytes.HasSuffix(r.log, newline) {
		r.log = append(r.log, '\n')
	}
	r.log = append(r.log, l.log...)
	r.whole = r.whole && l.whole
	r.lines++
	r.wait = j.taken
	return out
}

// text is what the rules match of a log: without its line ending.
func (j *joiner) text(log []byte) []byte {
	log = bytes.TrimSuffix(log, newline)
	return bytes.TrimSuffix(log, cr)
}

var cr = []byte("\r")

func (j *joiner) emitHold(a *record.Arena, h *hold) *record.Record {
	h.on = false
	return j.emit(a, h.time, h.head, h.log, h.whole)
}

// stream returns a stream for key to hold something, and keeps it.
func (j *joiner) stream(key streamKey) *stream {
	var st *stream
	if n := len(j.spare); n > 0 {
		st, j.spare = j.spare[n-1], j.spare[:n-1]
	} else {
		st = &stream{}
	}
	j.streams[key] = st
	return st
}

// settle lets key's stream go once it holds nothing, so that Held stays
// cheap and the sources of past files do not accumulate.
func (j *joiner) settle(key streamKey, st *stream) {
	if st.part.on || st.rec.on {
		return
	}
	delete(j.streams, key)
	if len(j.spare) < 8 {
		for _, h := range [...]*hold{&st.part, &st.rec, &st.trial} {
			h.first = tail.Mark{} // its file may go
			if cap(h.log) > maxSpareBuffer || cap(h.head) > maxSpareBuffer {
				h.log, h.head = nil, nil
			}
		}
		st.rule = nil
		j.spare = append(j.spare, st)
	}
}

// begin starts h with l, copying what it refers to.
func (h *hold) begin(l line, now uint64) {
	h.on, h.time, h.whole, h.lines = true, l.time, l.whole, 1
	h.head = append(h.head[:0], l.head...)
	h.log = append(h.log[:0], l.log...)
	h.first, h.seq, h.wait = l.first, l.seq, now
}

// line is h as a line for the rules, referring to h's buffers.
func (h *hold) line(whole bool) line {
	return line{time: h.time, head: h.head, log: h.log, whole: whole, made: true, first: h.first, seq: h.seq}
}

// Held reports where the oldest line source holds starts, and which of
// its streams has waited longest since it took a line (part or whole).
func (j *joiner) Held(source string) (Hold, bool) {
	if len(j.streams) == 0 {
		return Hold{}, false
	}
	var h Hold
	var seq uint64
	ok := false
	for _, stderr := range [...]bool{false, true} {
		st := j.streams[streamKey{source, stderr}]
		if st == nil {
			continue
		}
		var wait uint64
		for _, x := range [...]*hold{&st.rec, &st.part} {
			if !x.on {
				continue
			}
			if !ok || x.seq < seq {
				seq, h.First = x.seq, x.first
			}
			wait = max(wait, x.wait)
			ok = true
		}
		if h.Wait == 0 || wait < h.Wait {
			h.Wait = wait
		}
	}
	return h, ok
}

// Flush emits all source holds, stdout first: the parts of a line, cut,
// go through the rules (they may end a record, or join it), then the
// record, then a line it took on trial, as a record of its own.
func (j *joiner) Flush(a *record.Arena, out []*record.Record, source string) []*record.Record {
	for _, stderr := range [...]bool{false, true} {
		key := streamKey{source, stderr}
		st := j.streams[key]
		if st == nil {
			continue
		}
		if st.part.on {
			st.part.on = false
			out, _ = j.toRules(a, out, st, st.part.line(false))
		}
		if st.rec.on {
			out = append(out, j.emitHold(a, &st.rec))
		}
		if st.trial.on {
			out = append(out, j.emitHold(a, &st.trial))
		}
		j.settle(key, st)
	}
	return out
}
