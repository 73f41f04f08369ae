package lua

import (
	"embed"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"sync"

	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/internal/calc"
	"github.com/policyrun/policyrun/internal/luasandbox"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/record/coll"
	"github.com/policyrun/policyrun/spec"
)

//go:embed runtime.lua
var runtimeSource string

// runtimeParts are more of the runtime, the Lua of families of built-ins
// kept in files of their own: each runs after runtime.lua, in name order,
// with R, and adds its functions to it.
//
//go:embed runtime_*.lua
var runtimeParts embed.FS

var (
	runtimeOnce   sync.Once
	runtimeProto  *glua.FunctionProto
	runtimeProtos []*glua.FunctionProto // of runtimeParts
	runtimeErr    error
)

// compileRuntime compiles runtime.lua and runtimeParts.
func compileRuntime() {
	runtimeProto, runtimeErr = luasandbox.Compile(runtimeSource, "runtime.lua")
	if runtimeErr != nil {
		return
	}
	names, err := fs.Glob(runtimeParts, "runtime_*.lua")
	if err != nil {
		runtimeErr = err
		return
	}
	sort.Strings(names)
	for _, name := range names {
		src, err := runtimeParts.ReadFile(name)
		if err != nil {
			runtimeErr = err
			return
		}
		p, err := luasandbox.Compile(string(src), name)
		if err != nil {
			runtimeErr = err
			return
		}
		runtimeProtos = append(runtimeProtos, p)
	}
}

// state is one LState prepared for transpiled policies: the runtime loaded,
// its value markers at hand for the Go helpers and the converters.
type state struct {
	L                          *glua.LState
	R                          *glua.LTable
	null, flt, byt, ts, arr, m *glua.LTable
	ord                        *glua.LTable
	st                         *glua.LTable // R.ST: st.e is set by every record edit
	faults                     map[*glua.LTable]spec.Reason
	memFault                   *glua.LTable // R.FAULTS.memory_limit
	lim                        spec.Limits
	scratch                    *record.Arena // for to_string, parse_json and friends
	buf                        []byte
	fmtBuf                     []byte // format's
	keys                       luasandbox.KeyCache
	unflatten                  coll.Unflattener
	unique                     coll.Uniquer
	rand                       calc.Rand // uuid_v4's and uuid_v7's bits
}

// newState prepares an LState whose runs keep to lim: the runtime reads
// its limits and fault markers from R, which Go fills in from package spec.
func newState(lim spec.Limits) (*state, error) {
	runtimeOnce.Do(compileRuntime)
	if runtimeErr != nil {
		return nil, runtimeErr
	}
	L := luasandbox.New(lim.MaxString)
	s := &state{L: L, R: L.NewTable(), scratch: record.NewArena(), lim: lim, faults: map[*glua.LTable]spec.Reason{}}
	s.register()
	faults := L.NewTable()
	for r := spec.NoFault + 1; r < spec.NumReasons; r++ {
		t := L.NewTable()
		t.RawSetString("fault", glua.LString(r.String()))
		faults.RawSetString(r.String(), t)
		s.faults[t] = r
	}
	s.R.RawSetString("FAULTS", faults)
	s.memFault = faults.RawGetString(spec.MemoryLimit.String()).(*glua.LTable)
	L.SetMemoryHook(math.MaxInt64, s.memHook)
	s.R.RawSetString("MAXSTR", glua.LNumber(lim.MaxString))
	s.R.RawSetString("MAXITER", glua.LNumber(lim.MaxIterations))
	s.R.RawSetString("MAXELEMS", glua.LNumber(spec.MaxElements(lim)))
	for _, p := range append([]*glua.FunctionProto{runtimeProto}, runtimeProtos...) {
		L.Push(L.NewFunctionFromProto(p))
		L.Push(s.R)
		if err := L.PCall(1, 1, nil); err != nil {
			L.Close()
			return nil, fmt.Errorf("lua runtime: %w", err)
		}
		L.Pop(1)
	}
	get := func(name string) *glua.LTable { return s.R.RawGetString(name).(*glua.LTable) }
	s.null, s.flt, s.byt, s.ts = get("NULL"), get("FLT"), get("BYT"), get("TS")
	s.arr, s.m, s.ord, s.st = get("ARR"), get("MAP"), get("ORD"), get("ST")
	return s, nil
}

// memHook ends a run that has built more than it may (spec.MaxBuilt,
// the budget Runner.Run sets): every allocation after the first refused
// one is refused too, with a budget of 0, so that a pcall in the policy's
// runtime cannot carry on past the limit.
func (s *state) memHook(L *glua.LState, _ int) {
	L.SetMemoryBudget(0)
	L.Error(s.memFault, 0)
}

// faultOf returns the fault reason of an error raised by the runtime, or
// NoFault for any other error.
func (s *state) faultOf(err error) spec.Reason {
	ae, ok := err.(*glua.ApiError)
	if !ok {
		return spec.NoFault
	}
	if t, ok := ae.Object.(*glua.LTable); ok {
		return s.faults[t]
	}
	return spec.NoFault
}

// Boxes and markers.

func (s *state) box(f float64) *glua.LTable {
	t := s.L.CreateTable(1, 0)
	t.RawSetInt(1, glua.LNumber(f))
	t.Metatable = s.flt
	return t
}

func (s *state) newTS(unixNanos int64) *glua.LTable {
	sec, nsec := unixNanos/1e9, unixNanos%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	t := s.L.CreateTable(2, 0)
	t.RawSetInt(1, glua.LNumber(sec))
	t.RawSetInt(2, glua.LNumber(nsec))
	t.Metatable = s.ts
	return t
}

func (s *state) newMap(n int) (*glua.LTable, *glua.LTable) {
	t := s.L.CreateTable(0, n+1)
	o := s.L.CreateTable(n, 0)
	t.RawSetH(s.ord, o)
	t.Metatable = s.m
	return t, o
}

func (s *state) newArr(n int) *glua.LTable {
	t := s.L.CreateTable(n, 0)
	t.Metatable = s.arr
	return t
}

// kindOf classifies a Lua value of the transpiled representation.
func (s *state) kindOf(v glua.LValue) record.Kind {
	switch v := v.(type) {
	case *glua.LNilType:
		return record.Absent
	case glua.LBool:
		return record.Bool
	case glua.LNumber:
		return record.Int
	case glua.LString:
		return record.String
	case *glua.LTable:
		switch v.Metatable {
		case s.m:
			return record.Map
		case s.arr:
			return record.Array
		case s.flt:
			return record.Float
		case s.ts:
			return record.Timestamp
		case s.byt:
			return record.Bytes
		}
		if v == s.null {
			return record.Null
		}
	}
	return record.Absent
}

// tsNanos returns the unix nanoseconds of a timestamp table.
func tsNanos(t *glua.LTable) int64 {
	return int64(t.RawGetInt(1).(glua.LNumber))*1e9 + int64(t.RawGetInt(2).(glua.LNumber))
}

// toValue converts a Lua value of the transpiled representation into the
// arena a. size accumulates the bytes of keys and strings.
func (s *state) toValue(a *record.Arena, v glua.LValue, size *int) record.Value {
	switch v := v.(type) {
	case glua.LBool:
		return record.BoolValue(bool(v))
	case glua.LNumber:
		return record.IntValue(luasandbox.Int(float64(v)))
	case glua.LString:
		*size += len(v)
		return a.NewStringFrom(string(v))
	case *glua.LTable:
		switch v.Metatable {
		case s.m:
			o := v.RawGetH(s.ord).(*glua.LTable)
			n := o.Len()
			b := a.BeginMap(n)
			for i := 1; i <= n; i++ {
				k := o.RawGetInt(i)
				ks, _ := k.(glua.LString)
				*size += len(ks) + 4
				b.Add(a.NewStringFrom(string(ks)), s.toValue(a, v.RawGet(k), size))
			}
			return b.Finish()
		case s.arr:
			n := v.Len()
			b := a.BeginArray(n)
			for i := 1; i <= n; i++ {
				b.Append(s.toValue(a, v.RawGetInt(i), size))
			}
			return b.Finish()
		case s.flt:
			return record.FloatValue(float64(v.RawGetInt(1).(glua.LNumber)))
		case s.ts:
			return record.TimestampValue(tsNanos(v))
		case s.byt:
			b := v.RawGetInt(1).(glua.LString)
			*size += len(b)
			return a.NewBytes([]byte(b))
		}
		if v == s.null {
			return record.NullValue()
		}
	}
	return record.Value{}
}

// fromValue converts a record value to the transpiled representation.
func (s *state) fromValue(r *record.Arena, v record.Value) glua.LValue {
	switch v.Kind() {
	case record.Null:
		return s.null
	case record.Bool:
		return glua.LBool(v.Bool())
	case record.Int:
		return glua.LNumber(v.Int())
	case record.Float:
		return s.box(v.Float())
	case record.String:
		return glua.LString(string(r.Bytes(v)))
	case record.Bytes:
		t := s.L.CreateTable(1, 0)
		t.RawSetInt(1, glua.LString(string(r.Bytes(v))))
		t.Metatable = s.byt
		return t
	case record.Timestamp:
		return s.newTS(v.Time())
	case record.Array:
		n := r.Len(v)
		t := s.newArr(n)
		for it := r.Iter(v); it.Next(); {
			t.RawSetInt(it.Index()+1, s.fromValue(r, it.Value()))
		}
		return t
	case record.Map:
		n := r.Len(v)
		t, o := s.newMap(n)
		for it := r.Iter(v); it.Next(); {
			k := s.keys.Get(r.Bytes(it.Key()))
			o.RawSetInt(it.Index()+1, k)
			t.RawSetString(string(k), s.fromValue(r, it.Value()))
		}
		return t
	}
	return glua.LNil
}
