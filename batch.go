package policyrun

import (
	"bytes"
	"fmt"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// Format is how records are written, in Process's input and its output.
type Format uint8

const (
	// JSON is JSON lines: one object a line (blank lines are skipped, the
	// last newline is optional). Each kept record goes out as one line
	// ending in a newline. For an OTLP policy each line is a record's
	// OTLP view (docs/otlp.md), as in its tests.
	JSON Format = iota
	// Msgpack is msgpack events one after another, as Fluent Bit's
	// forward protocol and its chunks hold them: a map, [time, map] or
	// [[time, metadata], map]. Each kept record goes out in the shape it
	// came in.
	Msgpack
	// OTLP is one protobuf ExportLogsServiceRequest; the kept records go
	// out as one request, regrouped by resource and scope.
	OTLP
	// OTLPJSON is one OTLP/JSON ExportLogsServiceRequest; the kept records
	// go out as one OTLP/JSON request, regrouped as OTLP's are.
	OTLPJSON
)

var formatNames = [...]string{JSON: "json", Msgpack: "msgpack", OTLP: "otlp", OTLPJSON: "otlp-json"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", f)
}

// Counts is what one Process call did.
type Counts struct {
	spec.Counts        // Runs, Dropped, and Faults by reason
	Out         uint64 // records appended to dst, malformed ones included
	// Split counts the records a policy's split added: a record split
	// into n adds n-1, and each of the n is a run of Counts (Runs is
	// the records run over plus Split).
	Split uint64
	// Malformed counts the JSON lines and msgpack events that did not
	// decode: each is appended to dst unchanged (counted in Out) and not
	// run. An msgpack input whose next event has no length its headers
	// give is passed on whole from there, as one.
	Malformed uint64
}

// chunk is how many JSON or msgpack records share the arena before it is
// reset: a batch's memory is bounded by its chunk, not by its input.
const chunk = 256

// Batch runs one Policy over inputs, one call at a time, reusing its
// memory: after the first calls it allocates nothing per record. It is not
// safe for concurrent use; give each goroutine its own, or use
// Policy.Process, which pools them.
type Batch struct {
	p       *Policy
	arena   *record.Arena
	recs    []*record.Record
	results []spec.Result
	kept    []*record.Record
	enc     record.OTLPEncoder
	c       Counts
	// failed is the first failure of the backend in this call: the
	// records it concerns go on as they came, and so does the rest of
	// the input; Process returns it at the end.
	failed error
	// machine is the VM's per-run state, the batch's own: the VM's pool
	// of them is emptied at every garbage collection.
	machine *vm.Machine
	splits  bool            // the policy has a split (runPieces)
	pieces  []backend.Piece // a run's records, reused
	// clock is the time the records of one call see (spec.Batch).
	clock spec.Batch
}

// NewBatch returns a Batch of p.
func (p *Policy) NewBatch() *Batch {
	b := &Batch{p: p, arena: record.NewArena(), results: make([]spec.Result, chunk), splits: backend.Splits(p.prog)}
	if v, ok := p.prog.(backend.VM); ok {
		b.machine = vm.NewMachine(v.Program)
	}
	return b
}

// Process runs the policy over the records of in, written in format f, and
// appends what it keeps to dst in the same format; in and dst must not
// overlap. The error is a refused OTLP request (dst unchanged, nothing
// run), an unknown format, or a failure of the backend itself; a record's
// fault is not an error but a count.
func (b *Batch) Process(dst, in []byte, f Format) ([]byte, Counts, error) {
	b.c, b.failed = Counts{}, nil
	var err error
	switch f {
	case JSON:
		dst, err = b.jsonLines(dst, in)
	case Msgpack:
		dst, err = b.msgpack(dst, in)
	case OTLP:
		dst, err = b.otlp(dst, in, b.arena.DecodeOTLP, b.enc.AppendProto)
	case OTLPJSON:
		dst, err = b.otlp(dst, in, b.arena.DecodeOTLPJSON, b.enc.AppendJSON)
	default:
		err = fmt.Errorf("policyrun: unknown format %v", f)
	}
	b.arena.Reset()
	clear(b.recs)
	b.recs = b.recs[:0]
	if err == nil {
		err = b.failed
	}
	return dst, b.c, err
}

func (b *Batch) jsonLines(dst, in []byte) ([]byte, error) {
	for len(in) > 0 {
		line := in
		if i := bytes.IndexByte(in, '\n'); i >= 0 {
			line, in = in[:i], in[i+1:]
		} else {
			in = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec *record.Record
		var err error
		if b.p.otlp {
			rec, err = b.arena.DecodeOTLPView(line, record.Referenced)
		} else {
			rec, err = b.arena.DecodeJSON(line, record.Referenced)
		}
		if err != nil {
			// The records before it go out first, so that order holds.
			dst = b.flush(dst, JSON)
			b.c.Malformed++
			b.c.Out++
			dst = append(append(dst, line...), '\n')
			continue
		}
		b.recs = append(b.recs, rec)
		if len(b.recs) == chunk {
			dst = b.flush(dst, JSON)
		}
	}
	return b.flush(dst, JSON), nil
}

func (b *Batch) msgpack(dst, in []byte) ([]byte, error) {
	for len(in) > 0 {
		rec, used, err := b.arena.DecodeMsgpack(in, record.Referenced)
		if err != nil || used == 0 {
			dst = b.flush(dst, Msgpack)
			b.c.Malformed++
			b.c.Out++
			// An event whose extent its headers give is passed on and the
			// next one read; without one there is no next boundary.
			skip, ok := record.MsgpackLen(in)
			if !ok || skip == 0 {
				skip = len(in)
			}
			dst = append(dst, in[:skip]...)
			in = in[skip:]
			continue
		}
		in = in[used:]
		b.recs = append(b.recs, rec)
		if len(b.recs) == chunk {
			dst = b.flush(dst, Msgpack)
		}
	}
	return b.flush(dst, Msgpack), nil
}

// flush runs the pending records and appends the kept ones to dst, then
// resets the arena for the next chunk.
func (b *Batch) flush(dst []byte, f Format) []byte {
	if len(b.recs) == 0 {
		return dst
	}
	kept := b.run()
	for _, r := range kept {
		if f == Msgpack {
			dst = r.AppendMsgpack(dst)
		} else {
			dst = append(r.AppendJSON(dst), '\n')
		}
	}
	b.c.Out += uint64(len(kept))
	clear(b.kept)
	b.kept = b.kept[:0]
	clear(b.recs)
	b.recs = b.recs[:0]
	b.arena.Reset()
	return dst
}

func (b *Batch) otlp(dst, in []byte,
	decode func([]byte, record.Mode, []*record.Record) ([]*record.Record, error),
	encode func([]byte, []*record.Record) []byte) ([]byte, error) {
	recs, err := decode(in, record.Referenced, b.recs[:0])
	if err != nil {
		return dst, fmt.Errorf("policyrun: the request is refused: %w", err)
	}
	b.recs = recs
	kept := b.run()
	b.c.Out += uint64(len(kept))
	dst = encode(dst, kept)
	clear(b.kept)
	b.kept = b.kept[:0]
	return dst, nil
}

// run runs the policy over b.recs and returns the kept records, in order,
// with those a run split a record into after it. A failure of the backend
// itself passes the records it concerns on as they came in, counted as the
// Lua error it is, and is kept in b.failed for Process to return.
func (b *Batch) run() []*record.Record {
	if b.splits {
		return b.runPieces()
	}
	if cap(b.results) < len(b.recs) {
		b.results = make([]spec.Result, len(b.recs))
	}
	results := b.results[:len(b.recs)]
	fail := func(res *spec.Result, err error) {
		if !res.Faulted() {
			*res = spec.Result{Fault: spec.LuaError}
			if b.failed == nil {
				b.failed = fmt.Errorf("policyrun: policy %q: %w", b.p.name, err)
			}
		}
	}
	var splits [][]*record.Record // by index, when a run split a record
	switch prog := b.p.prog.(type) {
	case backend.VM:
		b.machine.RunBatch(b.recs, results)
	case backend.BatchProgram:
		if err := prog.RunBatch(b.recs, results); err != nil {
			for i := range results {
				results[i] = spec.Result{}
				fail(&results[i], err)
			}
		}
	case backend.SplitProgram:
		for i, r := range b.recs {
			var extra []*record.Record
			var err error
			if results[i], extra, err = prog.RunSplit(r); err != nil {
				fail(&results[i], err)
			}
			if len(extra) > 0 {
				if splits == nil {
					splits = make([][]*record.Record, len(b.recs))
				}
				splits[i] = extra
			}
		}
	default:
		b.clock = spec.Batch{}
		for i, r := range b.recs {
			var err error
			if ib, ok := prog.(backend.InBatch); ok {
				results[i], err = ib.RunIn(&b.clock, r)
			} else {
				results[i], err = prog.Run(r)
			}
			if err != nil {
				fail(&results[i], err)
			}
		}
	}
	for i, r := range b.recs {
		b.c.Add(results[i])
		if !results[i].Kept() {
			continue
		}
		b.kept = append(b.kept, r)
		if splits != nil {
			b.kept = append(b.kept, splits[i]...)
		}
	}
	return b.kept
}

// runPieces is run for a policy with split: each record is followed by
// the records it became, those kept, in order; in an OTLP request they
// stay in its resource and scope (the encoder groups by them, and each
// copy holds the original's).
func (b *Batch) runPieces() []*record.Record {
	b.clock = spec.Batch{}
	if b.machine != nil {
		b.machine.SetBatch(&b.clock)
		defer b.machine.SetBatch(nil)
	}
	for _, r := range b.recs {
		var err error
		if b.machine != nil {
			b.pieces = b.machine.RunPieces(r, b.pieces[:0])
		} else {
			b.pieces, err = backend.RunAllIn(&b.clock, b.p.prog, r, b.pieces[:0])
		}
		if err != nil && b.failed == nil {
			// RunAll has passed on the records concerned, faulted.
			b.failed = fmt.Errorf("policyrun: policy %q: %w", b.p.name, err)
		}
		b.c.Split += uint64(len(b.pieces) - 1)
		for _, pc := range b.pieces {
			b.c.Add(pc.Result)
			if pc.Result.Kept() {
				b.kept = append(b.kept, pc.Rec)
			}
		}
		clear(b.pieces)
	}
	return b.kept
}
