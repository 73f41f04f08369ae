// Package luascript runs hand-written Fluent Bit-style Lua filter scripts
// over records, within limits of time and memory, so that people can bring
// their existing filters to a pipeline and measure them against a compiled
// policy (docs/lua.md). The policy backend that transpiles to Lua is
// package lua.
package luascript

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/policyrun/policyrun/internal/luasandbox"
	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// Script is a Fluent Bit-style Lua filter: a file that defines a function
// FUNC(tag, timestamp, record) returning code, timestamp, record, with
// Fluent Bit's codes: -1 drop, 0 keep unchanged, 1 modified with the new
// timestamp, 2 modified keeping the old one. A record returned as an array
// of maps splits the record into several (RunSplit). The source is
// compiled once; runs use pooled LStates with only the safe libraries.
//
// A call that raises an error, returns something else than those codes,
// runs past Timeout or makes its state hold more than MemoryLimit faults
// the record: it is passed through unchanged and counted, and Run's error
// (a *FaultError) says what happened. Nothing a script does can crash the
// process (limits.go).
//
// The fields after Call are Fluent Bit's options and policyrun's; set them
// before the first Run, not while runs are under way.
type Script struct {
	Name string // the file name, for messages
	Call string // the function called per record
	// Timeout bounds one call, and the top-level chunk at load (0: no
	// bound); the time_limit of docs/lua.md.
	Timeout time.Duration
	// MemoryLimit bounds the bytes one LState holds (0: no bound); a call
	// that would pass it faults with memory_limit and its LState is
	// replaced. It applies to the LStates made after it is set.
	MemoryLimit int64

	// TimeAsTable passes the timestamp as a table {sec = s, nsec = ns}
	// instead of float seconds (Fluent Bit's time_as_table).
	TimeAsTable bool
	// TypeIntKeys are map keys whose number values become ints, truncated,
	// in the record a call returns, at any depth (type_int_key).
	TypeIntKeys []string
	// TypeArrayKeys are map keys whose table values are always arrays,
	// even when empty (type_array_key).
	TypeArrayKeys []string
	// AllowGetenv lets os.getenv read the agent's environment; without it
	// os.getenv raises an error.
	AllowGetenv bool
	// Stderr receives print's output (nil: os.Stderr), each line prefixed
	// with PrintPrefix and ": " (PrintPrefix "": Name).
	Stderr      io.Writer
	PrintPrefix string
	// Clock is what os.time and os.date read as now (nil: the wall
	// clock); Location is their local time zone (nil: time.Local).
	Clock    spec.Clock
	Location *time.Location

	proto   *glua.FunctionProto
	runners luasandbox.Pool[*Runner]
	printMu sync.Mutex
	stopMu  sync.Mutex
	stop    context.Context // see BindContext
}

// FaultError is the error that comes with a faulted Result: the reason
// again, and the message of what went wrong — the Lua error with its script
// and line ("f.lua:4: bad argument #1 to 'lower'"), or what the call
// returned ("returned code 7").
type FaultError struct {
	Reason spec.Reason
	Msg    string
}

// Error is the message, without the reason.
func (e *FaultError) Error() string { return e.Msg }

// Load compiles a filter script and checks that it defines call,
// with DefaultLimits.
func Load(name string, src []byte, call string) (*Script, error) {
	return LoadLimits(name, src, call, DefaultLimits)
}

// LoadLimits is Load with the given limits; the top-level
// chunk runs within them too.
func LoadLimits(name string, src []byte, call string, lim Limits) (*Script, error) {
	proto, err := luasandbox.Compile(string(src), name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &Script{Name: name, Call: call, Timeout: lim.Time, MemoryLimit: lim.Memory, proto: proto}
	r, err := s.NewRunner()
	if err != nil {
		return nil, err
	}
	s.runners.Put(r)
	return s, nil
}

// Runner runs a script on one LState; one goroutine at a time.
type Runner struct {
	s      *Script
	L      *glua.LState // nil after a renewal that failed
	fn     *glua.LFunction
	mem    *memGuard // nil without a memory limit
	ctx    context.Context
	cancel context.CancelFunc
	parent context.Context // what ctx derives from: the script's stop context
	keys   luasandbox.KeyCache
	// The time limit's timer, made once and reset per call; it cancels
	// cur, then signals fired (see armTimer).
	timer *time.Timer
	cur   atomic.Pointer[context.CancelFunc]
	fired chan struct{}
	// arrMT and mapMT mark the tables made from a record's arrays and
	// maps, as Fluent Bit's metatables do, so that they convert back as
	// what they were (an array stays an array, a map a map, even empty).
	arrMT, mapMT *glua.LTable
}

// NewRunner loads the script into a fresh LState.
func (s *Script) NewRunner() (*Runner, error) {
	L, fn, mem, err := s.loadState()
	if err != nil {
		return nil, err
	}
	r := &Runner{s: s}
	r.setState(L, fn, mem)
	return r, nil
}

// setState gives the runner a loaded LState, with the metatables that
// mark the tables made from a record's arrays and maps.
func (r *Runner) setState(L *glua.LState, fn *glua.LFunction, mem *memGuard) {
	r.L, r.fn, r.mem = L, fn, mem
	r.arrMT, r.mapMT = L.NewTable(), L.NewTable()
	r.arrMT.RawSetString("type", glua.LString("array"))
	r.mapMT.RawSetString("type", glua.LString("map"))
}

// Close releases the runner's LState.
func (r *Runner) Close() {
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.cancel != nil {
		r.cancel()
	}
	if r.L != nil {
		r.L.Close()
	}
}

// Run runs the script on rec with a pooled runner. A call that splits the
// record into more than one faults (bad_return): callers that can take
// the extra records use RunSplit.
func (s *Script) Run(rec *record.Record) (spec.Result, error) {
	return unsplit(s.run(rec, false))
}

// RunSplit runs the script on rec with a pooled runner. When the call
// returns an array of records, rec becomes the first and the others are
// new records of rec's arena, with its tag, time and metadata, returned in
// order; they are to be emitted right after rec.
func (s *Script) RunSplit(rec *record.Record) (spec.Result, []*record.Record, error) {
	return s.run(rec, true)
}

func (s *Script) run(rec *record.Record, split bool) (spec.Result, []*record.Record, error) {
	r, err := s.runners.Get(s.NewRunner)
	if err != nil {
		return spec.Result{}, nil, err
	}
	res, extra, err := r.run(rec, split)
	s.runners.Put(r)
	return res, extra, err
}

// Run calls the script's function on rec and applies what it returns; a
// call that splits the record faults (see Script.Run).
func (r *Runner) Run(rec *record.Record) (spec.Result, error) {
	return unsplit(r.run(rec, false))
}

// unsplit is a run's result without its extra records, which a run that
// may not split never has.
func unsplit(res spec.Result, _ []*record.Record, err error) (spec.Result, error) {
	return res, err
}

// RunSplit is Script.RunSplit on this runner.
func (r *Runner) RunSplit(rec *record.Record) (spec.Result, []*record.Record, error) {
	return r.run(rec, true)
}

func (r *Runner) run(rec *record.Record, split bool) (spec.Result, []*record.Record, error) {
	if r.L == nil {
		if r.renew(); r.L == nil {
			return fault(spec.LuaError, "%s: the Lua state could not be made again after a memory fault", r.s.Name)
		}
	}
	L := r.L
	a := rec.Arena()
	L.Push(r.fn)
	L.Push(glua.LString(string(rec.Tag())))
	if r.s.TimeAsTable {
		sec, nsec := splitNanos(rec.Time())
		t := L.CreateTable(0, 2)
		t.RawSetString("sec", glua.LNumber(sec))
		t.RawSetString("nsec", glua.LNumber(nsec))
		L.Push(t)
	} else {
		// flb_time_to_double: seconds plus nanoseconds, which keeps the
		// fraction of a current time as exact as a float64 can.
		sec, nsec := splitNanos(rec.Time())
		L.Push(glua.LNumber(float64(sec) + float64(nsec)/1e9))
	}
	L.Push(r.fromValue(a, rec.Root()))
	r.callContext()
	timed := r.s.Timeout > 0
	if timed {
		r.armTimer(r.s.Timeout)
	}
	err := L.PCall(3, 3, nil)
	stopped := timed && r.disarmTimer()
	if err != nil && r.ctx.Err() != nil {
		// The budget ran out, or the script's stop context ended.
		stopped = true
	}
	if r.mem != nil && r.mem.exceeded {
		r.renew()
		return fault(spec.MemoryLimit, "%s: the call passed the memory limit of %d bytes (its Lua state is made again)", r.s.Name, r.s.MemoryLimit)
	}
	if stopped {
		// A fresh context for the next call.
		r.ctx = nil
		if err != nil {
			L.SetTop(0)
			return fault(spec.Timeout, "%s: the call ran past its time limit of %v", r.s.Name, r.s.Timeout)
		}
	}
	if err != nil {
		L.SetTop(0)
		return fault(spec.LuaError, "%s", luaMessage(err))
	}
	code, nts, nrec := L.Get(-3), L.Get(-2), L.Get(-1)
	L.Pop(3)
	c, ok := code.(glua.LNumber)
	if !ok {
		if code == glua.LNil {
			return fault(spec.BadReturn, "%s: %s returned no code", r.s.Name, r.s.Call)
		}
		return fault(spec.BadReturn, "%s: %s returned a %s as its code", r.s.Name, r.s.Call, code.Type())
	}
	switch c {
	case -1:
		return spec.Result{Action: spec.Drop}, nil, nil
	case 0:
		return spec.Result{Action: spec.Keep}, nil, nil
	case 1, 2:
	default:
		return fault(spec.BadReturn, "%s: %s returned code %v (want -1, 0, 1 or 2)", r.s.Name, r.s.Call, c)
	}
	t, ok := nrec.(*glua.LTable)
	if !ok {
		if nrec == glua.LNil {
			return fault(spec.BadReturn, "%s: %s returned code %v and no record", r.s.Name, r.s.Call, c)
		}
		return fault(spec.BadReturn, "%s: %s returned a %s as its record", r.s.Name, r.s.Call, nrec.Type())
	}
	newTime := rec.Time()
	if c == 1 {
		ns, ok := luaTime(nts)
		if !ok {
			return fault(spec.BadReturn, "%s: %s returned code 1 with a timestamp that is neither seconds nor {sec = s, nsec = ns} (%s)",
				r.s.Name, r.s.Call, nts.Type())
		}
		newTime = ns
	}
	if isArr, n := r.tableKind(t); isArr {
		return r.split(rec, t, n, newTime, split)
	}
	v, err := r.toValue(a, t, rec.Root(), 0)
	if err != nil {
		return fault(spec.BadReturn, "%s: %s returned a record %v", r.s.Name, r.s.Call, err)
	}
	if err := rec.Set(nil, v); err != nil {
		return fault(spec.BadReturn, "%s: %s returned a record that cannot be set: %v", r.s.Name, r.s.Call, err)
	}
	rec.SetTime(newTime)
	if err := rec.CheckOTLP(); err != nil {
		rec.Discard()
		return fault(spec.OTLPView, "%s: %s returned an OTLP record that breaks its view: %v", r.s.Name, r.s.Call, err)
	}
	rec.Commit()
	return spec.Result{Action: spec.Keep}, nil, nil
}

// split applies a returned array of n records: rec becomes the first,
// the others new records after it. Every element is converted before rec
// changes, so that a bad one leaves rec as it came in.
func (r *Runner) split(rec *record.Record, t *glua.LTable, n int, ts int64, split bool) (spec.Result, []*record.Record, error) {
	if n > 1 && !split {
		return fault(spec.BadReturn, "%s: %s split the record into %d, which this caller cannot take (it calls Run, not RunSplit)",
			r.s.Name, r.s.Call, n)
	}
	a := rec.Arena()
	vals := make([]record.Value, n)
	for i := range vals {
		el := t.RawGetInt(i + 1)
		et, ok := el.(*glua.LTable)
		if !ok {
			return fault(spec.BadReturn, "%s: %s returned an array whose element %d is a %s, not a record", r.s.Name, r.s.Call, i+1, el.Type())
		}
		if isArr, _ := r.tableKind(et); isArr {
			return fault(spec.BadReturn, "%s: %s returned an array whose element %d is an array, not a record", r.s.Name, r.s.Call, i+1)
		}
		v, err := r.toValue(a, et, rec.Root(), 1)
		if err != nil {
			return fault(spec.BadReturn, "%s: %s returned as its record %d a record %v", r.s.Name, r.s.Call, i+1, err)
		}
		vals[i] = v
	}
	var extra []*record.Record
	for i, v := range vals {
		out := rec
		if i > 0 {
			out = a.NewRecordLike(rec)
			extra = append(extra, out)
		}
		if err := out.Set(nil, v); err != nil {
			rec.Discard()
			return fault(spec.BadReturn, "%s: %s returned a record that cannot be set: %v", r.s.Name, r.s.Call, err)
		}
		out.SetTime(ts)
		if err := out.CheckOTLP(); err != nil {
			rec.Discard()
			return fault(spec.OTLPView, "%s: %s returned as its record %d an OTLP record that breaks its view: %v", r.s.Name, r.s.Call, i+1, err)
		}
	}
	for _, out := range append([]*record.Record{rec}, extra...) {
		out.Commit()
	}
	return spec.Result{Action: spec.Keep}, extra, nil
}

// fault passes the record through unchanged, as Fluent Bit does with a
// filter that fails, with the message of what went wrong.
func fault(reason spec.Reason, format string, args ...any) (spec.Result, []*record.Record, error) {
	return spec.Result{Action: spec.Keep, Fault: reason}, nil, &FaultError{Reason: reason, Msg: fmt.Sprintf(format, args...)}
}

// luaMessage is the message of a Lua error without gopher-lua's stack
// trace: "f.lua:4: attempt to call a nil value".
func luaMessage(err error) string {
	if ae, ok := err.(*glua.ApiError); ok && ae.Object != nil {
		return ae.Object.String()
	}
	return err.Error()
}

func splitNanos(ns int64) (sec, nsec int64) {
	sec, nsec = ns/1e9, ns%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	return sec, nsec
}

// luaTime reads a returned timestamp: seconds as a number, or Fluent Bit's
// table {sec = s, nsec = ns} (nsec 0 when missing).
func luaTime(v glua.LValue) (int64, bool) {
	switch v := v.(type) {
	case glua.LNumber:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 9e9 {
			return 0, false
		}
		sec := math.Floor(f)
		return int64(sec)*1e9 + int64(math.Round((f-sec)*1e9)), true
	case *glua.LTable:
		sec, ok := v.RawGetString("sec").(glua.LNumber)
		if !ok || math.Abs(float64(sec)) > 9e9 {
			return 0, false
		}
		var nsec glua.LNumber
		if n, ok := v.RawGetString("nsec").(glua.LNumber); ok {
			nsec = n
		}
		return int64(sec)*1e9 + int64(nsec), true
	}
	return 0, false
}

// fromValue converts a record value as Fluent Bit does for its Lua
// filter: maps and arrays become plain tables (marked with the runner's
// metatables), ints and floats numbers, null nil (so a null field is
// absent in Lua), timestamps seconds.
func (r *Runner) fromValue(a *record.Arena, v record.Value) glua.LValue {
	switch v.Kind() {
	case record.Bool:
		return glua.LBool(v.Bool())
	case record.Int:
		return glua.LNumber(v.Int())
	case record.Float:
		return glua.LNumber(v.Float())
	case record.String, record.Bytes:
		return glua.LString(string(a.Bytes(v)))
	case record.Timestamp:
		return glua.LNumber(float64(v.Time()) / 1e9)
	case record.Array:
		t := r.L.CreateTable(a.Len(v), 0)
		for it := a.Iter(v); it.Next(); {
			t.RawSetInt(it.Index()+1, r.fromValue(a, it.Value()))
		}
		t.Metatable = r.arrMT
		return t
	case record.Map:
		t := r.L.CreateTable(0, a.Len(v))
		for it := a.Iter(v); it.Next(); {
			t.RawSetString(string(r.keys.Get(a.Bytes(it.Key()))), r.fromValue(a, it.Value()))
		}
		t.Metatable = r.mapMT
		return t
	}
	return glua.LNil
}

// maxArray is the longest array a table converts to: table.maxn of a
// sparse table can ask for billions of nulls.
const maxArray = 1 << 20

// tableKind says how a table returned by a script converts, as Fluent
// Bit's flb_lua_tomsgpack does: a table made from a record's array (its
// metatable) is an array of #t elements, one made from a map is a map;
// any other table is an array when table.maxn(t), its largest positive
// numeric key, is a whole number — elements 1..maxn, holes null, keys of
// other kinds dropped (flb_lua_arraylength) — and a map otherwise (the
// empty table too).
func (r *Runner) tableKind(t *glua.LTable) (bool, int) {
	switch t.Metatable {
	case r.arrMT:
		return true, t.Len()
	case r.mapMT:
		return false, 0
	}
	var maxn float64
	for k, _ := t.Next(glua.LNil); k != glua.LNil; k, _ = t.Next(k) {
		if n, ok := k.(glua.LNumber); ok && float64(n) > maxn {
			maxn = float64(n)
		}
	}
	if maxn >= 1 && maxn == math.Trunc(maxn) {
		return true, int(min(maxn, maxArray+1))
	}
	return false, 0
}

// convError is what makes a returned record unconvertible, and where.
type convError struct{ what, at string }

func (e *convError) Error() string {
	if e.at == "" {
		return "with " + e.what
	}
	return "with " + e.what + " at " + e.at
}

// within prefixes err's place with step (".key" or "[i]").
func within(err error, step string) error {
	if ce, ok := err.(*convError); ok {
		ce.at = step + ce.at
	}
	return err
}

// toValue converts a value returned by a script into the arena. orig is
// the value that stood at the same place in the input (or Absent): a map's
// keys keep its order, and a float stays a float when the number is still
// whole. New keys follow in sorted order (Lua tables have none).
func (r *Runner) toValue(a *record.Arena, v glua.LValue, orig record.Value, depth int) (record.Value, error) {
	if depth > record.DefaultMaxDepth {
		return record.Value{}, &convError{what: "tables nested too deep"}
	}
	switch v := v.(type) {
	case *glua.LNilType: // a hole in an array
		return record.NullValue(), nil
	case glua.LBool:
		return record.BoolValue(bool(v)), nil
	case glua.LNumber:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return record.Value{}, &convError{what: "a number that is not finite"}
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<63 && orig.Kind() != record.Float {
			return record.IntValue(int64(f)), nil
		}
		return record.FloatValue(f), nil
	case glua.LString:
		return a.NewStringFrom(string(v)), nil
	case *glua.LTable:
		if isArr, n := r.tableKind(v); isArr {
			return r.toArray(a, v, n, orig, depth)
		}
		return r.toMap(a, v, orig, depth)
	}
	return record.Value{}, &convError{what: "a " + v.Type().String()}
}

func (r *Runner) toArray(a *record.Arena, t *glua.LTable, n int, orig record.Value, depth int) (record.Value, error) {
	if n > maxArray {
		return record.Value{}, &convError{what: fmt.Sprintf("an array of over %d elements", maxArray)}
	}
	b := a.BeginArray(n)
	for i := 1; i <= n; i++ {
		var o record.Value
		if orig.Kind() == record.Array {
			o, _ = a.Index(orig, i-1)
		}
		x, err := r.toValue(a, t.RawGetInt(i), o, depth+1)
		if err != nil {
			return record.Value{}, within(err, fmt.Sprintf("[%d]", i))
		}
		b.Append(x)
	}
	return b.Finish(), nil
}

// keyString is a map key as the record spells it: Fluent Bit packs a
// number or boolean key as itself, a record's keys are strings.
func keyString(k glua.LValue) (string, bool) {
	switch k := k.(type) {
	case glua.LString:
		return string(k), true
	case glua.LNumber:
		return k.String(), true
	case glua.LBool:
		if k {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

func (r *Runner) toMap(a *record.Arena, t *glua.LTable, orig record.Value, depth int) (record.Value, error) {
	b := a.BeginMap(0)
	if orig.Kind() == record.Map {
		for it := a.Iter(orig); it.Next(); {
			k := a.Str(it.Key())
			x := t.RawGetString(k)
			if x == glua.LNil {
				continue
			}
			val, err := r.entry(a, k, x, it.Value(), depth)
			if err != nil {
				return record.Value{}, err
			}
			b.Add(a.NewStringFrom(k), val)
		}
	}
	type entry struct {
		k string
		v glua.LValue
	}
	var extra []entry
	var bad glua.LValue
	t.ForEach(func(k, x glua.LValue) {
		ks, ok := keyString(k)
		if !ok {
			bad = k
			return
		}
		if _, isStr := k.(glua.LString); isStr && orig.Kind() == record.Map {
			if _, found := a.Key(orig, []byte(ks)); found {
				return
			}
		}
		extra = append(extra, entry{ks, x})
	})
	if bad != nil {
		return record.Value{}, &convError{what: "a key that is a " + bad.Type().String()}
	}
	slices.SortFunc(extra, func(x, y entry) int { return strings.Compare(x.k, y.k) })
	for _, e := range extra {
		val, err := r.entry(a, e.k, e.v, record.Value{}, depth)
		if err != nil {
			return record.Value{}, err
		}
		b.Add(a.NewStringFrom(e.k), val)
	}
	return b.Finish(), nil
}

// entry converts the value x of key k, with type_int_key and
// type_array_key applied as Fluent Bit applies them (try_to_convert_data_type),
// but matching the whole key.
func (r *Runner) entry(a *record.Arena, k string, x glua.LValue, orig record.Value, depth int) (record.Value, error) {
	if len(r.s.TypeIntKeys) > 0 {
		if n, ok := x.(glua.LNumber); ok && slices.Contains(r.s.TypeIntKeys, k) {
			f := math.Trunc(float64(n))
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return record.Value{}, &convError{what: "a number that is not finite", at: "." + k}
			}
			return record.IntValue(luasandbox.Int(f)), nil
		}
	}
	if len(r.s.TypeArrayKeys) > 0 {
		if t, ok := x.(*glua.LTable); ok && slices.Contains(r.s.TypeArrayKeys, k) {
			v, err := r.toArray(a, t, t.Len(), orig, depth+1)
			if err != nil {
				return v, within(err, "."+k)
			}
			return v, nil
		}
	}
	v, err := r.toValue(a, x, orig, depth+1)
	if err != nil {
		return v, within(err, "."+k)
	}
	return v, nil
}
