package lua

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	glua "github.com/yuin/gopher-lua"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// Script is a Fluent Bit-style Lua filter: a file that defines a function
// FUNC(tag, timestamp, record) returning code, timestamp, record, with
// Fluent Bit's codes: -1 drop, 0 keep unchanged, 1 modified with the new
// timestamp, 2 modified keeping the old one. The source is compiled once;
// runs use pooled LStates with only the safe libraries.
//
// A call that raises an error, returns something else than those codes,
// runs past Timeout or makes its state hold more than MemoryLimit faults
// the record: it is passed through unchanged and counted. Nothing a script
// does can crash the process (limits.go).
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

	proto   *glua.FunctionProto
	runners runnerPool[*ScriptRunner]
	stopMu  sync.Mutex
	stop    context.Context // see BindContext
}

// LoadScript compiles a filter script and checks that it defines call,
// with DefaultScriptLimits.
func LoadScript(name string, src []byte, call string) (*Script, error) {
	return LoadScriptLimits(name, src, call, DefaultScriptLimits)
}

// LoadScriptLimits is LoadScript with the given limits; the top-level
// chunk runs within them too.
func LoadScriptLimits(name string, src []byte, call string, lim ScriptLimits) (*Script, error) {
	proto, err := compileLua(string(src), name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &Script{Name: name, Call: call, Timeout: lim.Time, MemoryLimit: lim.Memory, proto: proto}
	r, err := s.NewRunner()
	if err != nil {
		return nil, err
	}
	s.runners.put(r)
	return s, nil
}

// ScriptRunner runs a script on one LState; one goroutine at a time.
type ScriptRunner struct {
	s      *Script
	L      *glua.LState // nil after a renewal that failed
	fn     *glua.LFunction
	mem    *memGuard // nil without a memory limit
	ctx    context.Context
	cancel context.CancelFunc
	parent context.Context // what ctx derives from: the script's stop context
	keys   keyCache
	// The time limit's timer, made once and reset per call; it cancels
	// cur, then signals fired (see armTimer).
	timer *time.Timer
	cur   atomic.Pointer[context.CancelFunc]
	fired chan struct{}
}

// NewRunner loads the script into a fresh LState.
func (s *Script) NewRunner() (*ScriptRunner, error) {
	L, fn, mem, err := s.loadState()
	if err != nil {
		return nil, err
	}
	return &ScriptRunner{s: s, L: L, fn: fn, mem: mem}, nil
}

// Close releases the runner's LState.
func (r *ScriptRunner) Close() {
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

// Run runs the script on rec with a pooled runner.
func (s *Script) Run(rec *record.Record) (spec.Result, error) {
	r, err := s.runners.get(s.NewRunner)
	if err != nil {
		return spec.Result{}, err
	}
	res := r.Run(rec)
	s.runners.put(r)
	return res, nil
}

// Run calls the script's function on rec and applies what it returns.
func (r *ScriptRunner) Run(rec *record.Record) spec.Result {
	if r.L == nil {
		if r.renew(); r.L == nil {
			return r.fault(spec.LuaError)
		}
	}
	L := r.L
	a := rec.Arena()
	ts := float64(rec.Time()) / 1e9
	L.Push(r.fn)
	L.Push(glua.LString(string(rec.Tag())))
	L.Push(glua.LNumber(ts))
	L.Push(plainFromValue(L, a, rec.Root(), &r.keys))
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
		return r.fault(spec.MemoryLimit)
	}
	if stopped {
		// A fresh context for the next call.
		r.ctx = nil
		if err != nil {
			L.SetTop(0)
			return r.fault(spec.Timeout)
		}
	}
	if err != nil {
		L.SetTop(0)
		return r.fault(spec.LuaError)
	}
	code, nts, nrec := L.Get(-3), L.Get(-2), L.Get(-1)
	L.Pop(3)
	c, ok := code.(glua.LNumber)
	if !ok {
		return r.fault(spec.BadReturn)
	}
	switch c {
	case -1:
		return spec.Result{Action: spec.Drop}
	case 0:
		return spec.Result{Action: spec.Keep}
	case 1, 2:
	default:
		return r.fault(spec.BadReturn)
	}
	t, ok := nrec.(*glua.LTable)
	if !ok {
		return r.fault(spec.BadReturn)
	}
	var newTime int64
	if c == 1 {
		ns, ok := luaTime(nts)
		if !ok {
			return r.fault(spec.BadReturn)
		}
		newTime = ns
	}
	v, err := plainToValue(a, t, rec.Root(), 0)
	if err != nil {
		return r.fault(spec.BadReturn)
	}
	if err := rec.Set(nil, v); err != nil {
		return r.fault(spec.BadReturn)
	}
	if c == 1 {
		rec.SetTime(newTime)
	}
	rec.Commit()
	return spec.Result{Action: spec.Keep}
}

// fault passes the record through unchanged, as Fluent Bit does with a
// filter that fails.
func (r *ScriptRunner) fault(reason spec.Reason) spec.Result {
	return spec.Result{Action: spec.Keep, Fault: reason}
}

// luaTime reads a returned timestamp: seconds as a number, or Fluent Bit's
// table {sec = s, nsec = ns}.
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
		sec, ok1 := v.RawGetString("sec").(glua.LNumber)
		nsec, ok2 := v.RawGetString("nsec").(glua.LNumber)
		if !ok1 || !ok2 {
			return 0, false
		}
		return int64(sec)*1e9 + int64(nsec), true
	}
	return 0, false
}

// plainFromValue converts a record value as Fluent Bit does for its Lua
// filter: maps and arrays become plain tables, ints and floats numbers,
// null nil (so a null field is absent in Lua), timestamps seconds.
func plainFromValue(L *glua.LState, a *record.Arena, v record.Value, keys *keyCache) glua.LValue {
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
		t := L.CreateTable(a.Len(v), 0)
		for it := a.Iter(v); it.Next(); {
			t.RawSetInt(it.Index()+1, plainFromValue(L, a, it.Value(), keys))
		}
		return t
	case record.Map:
		t := L.CreateTable(0, a.Len(v))
		for it := a.Iter(v); it.Next(); {
			t.RawSetString(string(keys.get(a.Bytes(it.Key()))), plainFromValue(L, a, it.Value(), keys))
		}
		return t
	}
	return glua.LNil
}

var errBadValue = errors.New("a value Lua cannot give back")

// plainToValue converts a table returned by a script into the arena. orig
// is the value that stood at the same place in the input (or Absent): its
// keys keep their order, a float stays a float when the number is still
// whole, and an empty table keeps being an array or a map. New keys follow
// in sorted order (Lua tables have none).
func plainToValue(a *record.Arena, v glua.LValue, orig record.Value, depth int) (record.Value, error) {
	if depth > record.DefaultMaxDepth {
		return record.Value{}, errBadValue
	}
	switch v := v.(type) {
	case glua.LBool:
		return record.BoolValue(bool(v)), nil
	case glua.LNumber:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return record.Value{}, errBadValue
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<63 && orig.Kind() != record.Float {
			return record.IntValue(int64(f)), nil
		}
		return record.FloatValue(f), nil
	case glua.LString:
		return a.NewStringFrom(string(v)), nil
	case *glua.LTable:
		n := v.Len()
		isArray := n > 0 || orig.Kind() == record.Array
		if isArray {
			// Any key outside 1..n makes it a map.
			v.ForEach(func(k, _ glua.LValue) {
				if kn, ok := k.(glua.LNumber); !ok || float64(kn) < 1 || float64(kn) > float64(n) || float64(kn) != math.Trunc(float64(kn)) {
					isArray = false
				}
			})
		}
		if isArray {
			b := a.BeginArray(n)
			for i := 1; i <= n; i++ {
				var o record.Value
				if orig.Kind() == record.Array {
					o, _ = a.Index(orig, i-1)
				}
				x, err := plainToValue(a, v.RawGetInt(i), o, depth+1)
				if err != nil {
					return record.Value{}, err
				}
				b.Append(x)
			}
			return b.Finish(), nil
		}
		b := a.BeginMap(0)
		if orig.Kind() == record.Map {
			for it := a.Iter(orig); it.Next(); {
				k := a.Str(it.Key())
				x := v.RawGetString(k)
				if x == glua.LNil {
					continue
				}
				val, err := plainToValue(a, x, it.Value(), depth+1)
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
		bad := false
		v.ForEach(func(k, x glua.LValue) {
			ks, ok := k.(glua.LString)
			if !ok {
				if kn, isNum := k.(glua.LNumber); isNum {
					ks = glua.LString(kn.String())
				} else {
					bad = true
					return
				}
			}
			if orig.Kind() == record.Map {
				if _, found := a.Key(orig, []byte(ks)); found {
					return
				}
			}
			extra = append(extra, entry{string(ks), x})
		})
		if bad {
			return record.Value{}, errBadValue
		}
		slices.SortFunc(extra, func(x, y entry) int { return strings.Compare(x.k, y.k) })
		for _, e := range extra {
			val, err := plainToValue(a, e.v, record.Value{}, depth+1)
			if err != nil {
				return record.Value{}, err
			}
			b.Add(a.NewStringFrom(e.k), val)
		}
		return b.Finish(), nil
	}
	return record.Value{}, errBadValue
}
