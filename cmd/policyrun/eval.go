package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/policyrun/policyrun"
	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/luascript"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// evalBatch is how many records share an arena before it is reset.
const evalBatch = 1024

// evalFormats are the formats of --in and --out.
var evalFormats = []string{"json", "msgpack", "otlp", "otlp-json"}

// evalStats are the counts of the summary line: those of a Process call
// of package policyrun, for the whole input, and the records read.
type evalStats struct {
	policyrun.Counts
	in int
}

func (s *evalStats) String() string {
	line := fmt.Sprintf("eval: %d in, %d out, %d dropped", s.in, s.Out, s.Dropped)
	line += reasons(s.Drops[:], func(i int) string { return spec.DropReason(i).String() })
	line += fmt.Sprintf(", %d faulted", s.Faulted())
	line += reasons(s.Faults[:], func(i int) string { return spec.Reason(i).String() })
	if s.Split > 0 {
		line += fmt.Sprintf(", %d added by split", s.Split)
	}
	if s.Malformed > 0 {
		line += fmt.Sprintf(", %d malformed passed through", s.Malformed)
	}
	return line
}

// reasons is " (a 1, b 2)", the counts that are not 0, in name order; ""
// when all are.
func reasons(counts []uint64, name func(int) string) string {
	var rs []string
	for i, n := range counts {
		if n > 0 {
			rs = append(rs, fmt.Sprintf("%s %d", name(i), n))
		}
	}
	if rs == nil {
		return ""
	}
	sort.Strings(rs)
	return " (" + strings.Join(rs, ", ") + ")"
}

// evalCommand is `policyrun eval --policy FILE [--backend vm|lua] [--in json|msgpack] [--out json|msgpack]`.
func evalCommand(fl *flag.FlagSet) runFunc {
	policyFile := fl.String("policy", "", "the policy `file` to run")
	backendName := fl.String("backend", backend.Names()[0], "the backend that runs the policy")
	inFormat := fl.String("in", "json", "input `format`: "+strings.Join(evalFormats, ", "))
	outFormat := fl.String("out", "json", "output `format`: "+strings.Join(evalFormats, ", "))
	luaScript := fl.String("lua", "", "run the Fluent Bit-style Lua filter `script` instead of a policy")
	luaCall := fl.String("call", "", "the `function` of the --lua script called per record: FUNC(tag, timestamp, record)")
	luaTimeout := fl.Duration("lua-timeout", luascript.DefaultTimeLimit, "the time limit of a --lua call, and of the script's top level at load: a call that runs longer is stopped and its record passed through (0: no limit)")
	luaMemory := sizeFlag(luascript.DefaultMemoryLimit)
	fl.Var(&luaMemory, "lua-memory-limit", "the memory limit of the --lua script's state: a call that would pass it is stopped, its record passed through and the state replaced (0: no limit)")
	params := paramFlag{}
	fl.Var(params, "param", "give the policy's parameter a value, `name=value` (repeatable; JSON unless the parameter is a string)")
	tag := fl.String("tag", "", "the `tag` of every record (%tag; a script's tag argument)")
	timeFlag := fl.String("time", "", "the run's clock (now(), dedupe, rate_limit) and the time of the records that carry none, as `RFC3339` (%time; a script's timestamp); default the wall clock, and 1970-01-01T00:00:00Z for records")
	maxRecords := fl.Int("max-request-records", config.DefaultOTLPMaxRequestRecords, "the most LogRecords an OTLP request may hold, as the otlp input's max_request_records: a request with more is refused, since eval holds a request's records at once (0: no bound)")
	return func(c *call) int {
		var recTime int64
		var clock spec.Clock
		if *timeFlag != "" {
			t, err := time.Parse(time.RFC3339Nano, *timeFlag)
			if err != nil {
				fmt.Fprintf(c.stderr, "policyrun eval: --time: %v\n", err)
				return 2
			}
			recTime, clock = t.UnixNano(), spec.FixedClock(t)
		}
		if (*policyFile == "") == (*luaScript == "") || (*luaScript != "") != (*luaCall != "") || fl.NArg() > 0 {
			fl.Usage()
			return 2
		}
		for _, f := range []string{*inFormat, *outFormat} {
			if !slices.Contains(evalFormats, f) {
				fmt.Fprintf(c.stderr, "policyrun eval: unknown format %q (want one of %s)\n", f, strings.Join(evalFormats, ", "))
				return 2
			}
		}
		e := &evaluator{tag: []byte(*tag), time: recTime}
		if *luaScript != "" {
			r, code := loadLuaScript(*luaScript, *luaCall, luascript.Limits{Time: *luaTimeout, Memory: int64(luaMemory)}, c.stderr)
			if r == nil {
				return code
			}
			e.run = func(rec *record.Record, dst []backend.Piece) ([]backend.Piece, error) {
				return backend.RunAll(r, rec, dst)
			}
		} else {
			p, code := loadPolicy(*policyFile, *backendName, c.stderr, policyrun.WithParams(spec.Params(params)), policyrun.WithClock(clock))
			if p == nil {
				return code
			}
			// An OTLP policy's JSON lines are views (docs/otlp.md), as in its tests.
			e.run, e.views = p.RunAll, p.OTLP()
		}
		return e.records(c.stdin, c.stdout, c.stderr, *inFormat, *outFormat, *maxRecords)
	}
}

// loadLuaScript loads a Fluent Bit-style filter script for eval --lua.
func loadLuaScript(file, call string, lim luascript.Limits, stderr io.Writer) (backend.Program, int) {
	src, err := policy.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "policyrun eval: %v\n", err)
		return nil, 2
	}
	s, err := luascript.LoadLimits(file, src, call, lim)
	if err != nil {
		fmt.Fprintf(stderr, "policyrun eval: %v\n", err)
		return nil, 1
	}
	return s, 0
}

// loadPolicy compiles a policy file for the named backend with opts; it
// reports problems and returns nil and the exit code.
func loadPolicy(file, backendName string, stderr io.Writer, opts ...policyrun.Option) (*policyrun.Policy, int) {
	if _, err := backend.Lookup(backendName); err != nil {
		fmt.Fprintf(stderr, "policyrun eval: %v; eval runs one backend (policyrun test compares them all)\n", err)
		return nil, 2
	}
	src, err := policy.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "policyrun eval: %v\n", err)
		return nil, 2
	}
	p, err := policyrun.Compile(file, src, append(opts, policyrun.WithBackend(backendName))...)
	var diags *policyrun.Error
	switch {
	case errors.As(err, &diags):
		diag.WriteText(stderr, src, diags.List)
		return nil, 1
	case err != nil:
		fmt.Fprintf(stderr, "policyrun eval: %v\n", err)
		return nil, 1
	}
	return p, 0
}

// records runs the records of stdin, written in inFormat, and writes
// those kept in outFormat.
func (e *evaluator) records(stdin io.Reader, stdout, stderr io.Writer, inFormat, outFormat string, maxRecords int) int {
	var err error
	e.out, e.stderr = bufio.NewWriterSize(stdout, 64<<10), stderr
	e.msgpack, e.arena = outFormat == "msgpack", record.NewArena()
	e.arena.Limits.MaxRecords = maxRecords
	if strings.HasPrefix(outFormat, "otlp") {
		e.otlpOut = outFormat
	}
	switch inFormat {
	case "msgpack":
		err = e.msgpackInput(stdin)
	case "otlp", "otlp-json":
		err = e.otlpInput(stdin, inFormat)
	default:
		err = e.jsonInput(stdin)
	}
	if err == nil && e.otlpOut != "" && (len(e.kept) > 0 || !e.wrote) {
		err = e.writeOTLP()
	}
	if ferr := e.out.Flush(); err == nil {
		err = ferr
	}
	fmt.Fprintln(stderr, e.stats.String())
	if err != nil {
		fmt.Fprintf(stderr, "policyrun eval: %v\n", err)
		if errors.As(err, new(*record.DecodeError)) {
			return 1 // a refused request: bad input, as a policy error is
		}
		return 2
	}
	return 0
}

type evaluator struct {
	run     func(*record.Record, []backend.Piece) ([]backend.Piece, error) // backend.RunAll
	pieces  []backend.Piece                                                // what a run made, reused
	tag     []byte                                                         // --tag
	time    int64                                                          // --time, for records without one
	stats   evalStats
	out     *bufio.Writer
	stderr  io.Writer
	msgpack bool
	arena   *record.Arena
	buf     []byte
	// otlpOut is the OTLP format of --out, if it is one: the kept records
	// are collected (the arena is not reset) and go out as one request.
	otlpOut string
	kept    []*record.Record
	enc     record.OTLPEncoder
	views   bool // JSON lines are OTLP views (an OTLP policy)
	wrote   bool // a request went out
}

// record runs the policy over one record and writes it, and the records
// it was split into, when kept. A fault that comes with a message is
// reported with the record's number.
func (e *evaluator) record(rec *record.Record) error {
	e.stats.in++
	if len(e.tag) > 0 {
		rec.SetTag(e.tag)
	}
	if rec.Time() == 0 {
		rec.SetTime(e.time)
	}
	rec.Commit()
	pieces, err := e.run(rec, e.pieces[:0])
	e.pieces = pieces[:0]
	if err != nil && !(len(pieces) > 0 && pieces[len(pieces)-1].Result.Faulted()) {
		return err // the backend itself failed
	}
	e.stats.Split += uint64(len(pieces) - 1)
	for _, pc := range pieces {
		o := pc.Result
		e.stats.Add(o)
		if o.Faulted() && err != nil {
			fmt.Fprintf(e.stderr, "policyrun eval: record %d: %s: %v\n", e.stats.in, o.Fault, err)
		}
		if !o.Kept() {
			continue
		}
		if err := e.write(pc.Rec); err != nil {
			return err
		}
	}
	clear(pieces)
	return nil
}

func (e *evaluator) write(rec *record.Record) error {
	e.stats.Out++
	if e.otlpOut != "" {
		e.kept = append(e.kept, rec)
		return nil
	}
	if e.msgpack {
		e.buf = rec.AppendMsgpack(e.buf[:0])
	} else {
		e.buf = append(rec.AppendJSON(e.buf[:0]), '\n')
	}
	_, err := e.out.Write(e.buf)
	return err
}

func (e *evaluator) jsonInput(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo, n := 1, 0; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && strings.TrimSpace(string(line)) != "" {
			if n == evalBatch && e.otlpOut == "" {
				e.arena.Reset()
				n = 0
			}
			n++
			var rec *record.Record
			var derr error
			if e.views {
				rec, derr = e.arena.DecodeOTLPView(line, record.Owned)
			} else {
				rec, derr = e.arena.DecodeJSON(line, record.Owned)
			}
			if derr != nil {
				e.malformed(lineNo, derr, line)
			} else if rerr := e.record(rec); rerr != nil {
				return rerr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// malformed reports a line that does not decode and passes it through.
func (e *evaluator) malformed(lineNo int, err error, line []byte) {
	e.passedThrough()
	fmt.Fprintf(e.stderr, "policyrun eval: line %d: %v (passed through unchanged)\n", lineNo, err)
	if len(line) > 0 && line[len(line)-1] != '\n' {
		line = append(line, '\n')
	}
	e.out.Write(line)
}

// passedThrough counts a record that does not decode, passed through.
func (e *evaluator) passedThrough() { e.stats.in++; e.stats.Malformed++; e.stats.Out++ }

func (e *evaluator) msgpackInput(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	for n, i := 0, 1; len(data) > 0; i++ {
		if n == evalBatch && e.otlpOut == "" {
			e.arena.Reset()
			n = 0
		}
		n++
		rec, used, err := e.arena.DecodeMsgpack(data, record.Referenced)
		if err != nil {
			e.passedThrough()
			// A value whose extent its headers give is passed through and
			// the next one read. Without it (the input ends inside the
			// value, or type byte 0xc1) there is no next boundary: the
			// rest is passed through as it is.
			skip, ok := record.MsgpackLen(data)
			if !ok {
				fmt.Fprintf(e.stderr, "policyrun eval: record %d: %v (the rest of the input is passed through unchanged)\n", i, err)
				_, werr := e.out.Write(data)
				return werr
			}
			fmt.Fprintf(e.stderr, "policyrun eval: record %d: %v (its %d bytes passed through unchanged)\n", i, err, skip)
			if _, werr := e.out.Write(data[:skip]); werr != nil {
				return werr
			}
			data = data[skip:]
			continue
		}
		if err := e.record(rec); err != nil {
			return err
		}
		data = data[used:]
		if used == 0 {
			return errors.New("msgpack decoder made no progress")
		}
	}
	return nil
}

// otlpInput runs the records of OTLP requests: in protobuf one, the whole
// of r; in OTLP/JSON one per line. A request that does not decode is
// refused whole, as an OTLP receiver answers 400: nothing of it is run or
// written. With an OTLP --out, each request's kept records go out as one
// request.
func (e *evaluator) otlpInput(r io.Reader, format string) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if format == "otlp" {
		return e.otlpRequest(data, 0, e.arena.DecodeOTLP)
	}
	// OTLP/JSON: a stream of requests, as jq reads JSON values, whatever
	// the whitespace between and inside them (one a line, or pretty-printed).
	dec := json.NewDecoder(bytes.NewReader(data))
	for prev := 0; ; {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			// Not JSON: the OTLP/JSON decoder says why, and where in the
			// request that starts there.
			rest := bytes.TrimLeft(data[prev:], " \t\r\n")
			return e.otlpRequest(rest, lineOf(data, len(data)-len(rest)), e.arena.DecodeOTLPJSON)
		}
		end := int(dec.InputOffset())
		if err := e.otlpRequest(raw, lineOf(data, end-len(raw)), e.arena.DecodeOTLPJSON); err != nil {
			return err
		}
		prev = end
	}
}

// lineOf is the line (from 1) of the byte at off.
func lineOf(data []byte, off int) int { return 1 + bytes.Count(data[:off], []byte{'\n'}) }

func (e *evaluator) otlpRequest(req []byte, lineNo int, decode func([]byte, record.Mode, []*record.Record) ([]*record.Record, error)) error {
	recs, err := decode(req, record.Referenced, nil)
	if errors.Is(err, record.ErrTooManyRecords) {
		err = fmt.Errorf("%w (--max-request-records raises the bound)", err)
	}
	if err != nil {
		if lineNo > 0 {
			return fmt.Errorf("line %d: the request is refused: %w", lineNo, err)
		}
		return fmt.Errorf("the request is refused: %w", err)
	}
	for _, rec := range recs {
		if err := e.record(rec); err != nil {
			return err
		}
	}
	if e.otlpOut != "" {
		return e.writeOTLP()
	}
	return nil
}

// writeOTLP writes the kept records as one request.
func (e *evaluator) writeOTLP() error {
	defer func() { clear(e.kept); e.kept = e.kept[:0] }()
	if len(e.kept) == 0 && e.wrote {
		return nil // one empty request at most
	}
	e.wrote = true
	if e.otlpOut == "otlp" {
		e.buf = e.enc.AppendProto(e.buf[:0], e.kept)
	} else {
		e.buf = append(e.enc.AppendJSON(e.buf[:0], e.kept), '\n')
	}
	_, err := e.out.Write(e.buf)
	return err
}
