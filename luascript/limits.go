package luascript

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/policyrun/policyrun/internal/luasandbox"
	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/spec"
)

// The limits of a Fluent Bit-style script's runs unless its loader says
// otherwise (docs/lua.md, "Limits").
const (
	// DefaultTimeLimit bounds one call, and the script's top-level chunk
	// when it loads.
	DefaultTimeLimit = time.Second
	// DefaultMemoryLimit bounds what one LState holds: strings, tables
	// and closures.
	DefaultMemoryLimit = 64 << 20
)

// Limits are the bounds of a script's runs; 0 means no bound.
type Limits struct {
	Time   time.Duration // per call and for the top-level chunk at load
	Memory int64         // bytes held by one LState
}

// DefaultLimits are DefaultTimeLimit and DefaultMemoryLimit.
var DefaultLimits = Limits{Time: DefaultTimeLimit, Memory: DefaultMemoryLimit}

// memGuard keeps one LState within its memory limit. The patched
// gopher-lua (internal/third_party/gopher-lua) charges every string,
// table entry and closure the VM and the libraries are about to allocate;
// when the charges pass the budget, hook measures what the state really
// holds (live) and either sets a new budget or, when live plus the pending
// allocation (with what the library call in progress holds outside Lua's
// reach) would pass the limit, raises an error before anything is
// allocated. exceeded stays set, so that a script that catches the error
// with pcall still faults, and every later allocation of the call fails
// too.
type memGuard struct {
	limit    int64
	exceeded bool
	walk     liveWalk
}

func newMemGuard(L *glua.LState, limit int64) *memGuard {
	g := &memGuard{limit: limit}
	L.SetMemoryHook(limit, g.hook)
	return g
}

func (g *memGuard) hook(L *glua.LState, n int) {
	if !g.exceeded {
		live := g.walk.live(L, g.limit)
		if left := g.limit - live - int64(n); left >= 0 {
			// Measure again when left is used up, or an eighth of the
			// limit if that is more: a state near its limit is not walked
			// at every allocation, and passes it by an eighth at most.
			L.SetMemoryBudget(max(left, g.limit/8))
			return
		}
		g.exceeded = true
	}
	L.SetMemoryBudget(0)
	L.RaiseError("memory_limit: the script would hold over %d bytes", g.limit)
}

// liveWalk measures what an LState holds: everything reachable from its
// globals, its registry and its stack, in bytes of Go's heap. Strings
// count their bytes and their box (one string held in many places once),
// tables their storage as gopher-lua keeps it (LTable.MemSize: a string
// key costs a slot in three places), numbers their box, closures a header
// and their upvalues. It walks with a stack of its own, so that deeply
// nested tables cannot exhaust the goroutine's, and stops as soon as the
// count passes the limit. What the walk itself holds is kept small, since
// it is held beside a state at its limit: containers are marked in place
// (LTable.Mark) rather than remembered in a set, and the stack holds one
// position in each container the walk is inside rather than every value
// still to visit (a set and a queue made a state of short strings at a
// 64 MB limit reach 196 MB of RSS).
type liveWalk struct {
	gen   uint32
	strs  map[*byte]struct{}
	stack []walkFrame
	n     int64
}

// walkFrame is a container being walked and the place in it to go on
// from: an entry of a table (then its metatable), an upvalue of a
// function (then its environment), or a userdata's metatable and
// environment.
type walkFrame struct {
	v glua.LValue
	i int
}

// bigString is the length from which a string is counted once however
// many places hold it; shorter ones are counted where they are.
const bigString = 256

func (w *liveWalk) live(L *glua.LState, limit int64) int64 {
	if w.strs == nil {
		w.strs = map[*byte]struct{}{}
	}
	clear(w.strs)
	w.gen, w.n = glua.NewMarkGeneration(), 0
	w.add(L.G.Global)
	w.add(L.G.Registry)
	L.ForEachStackValue(w.add)
	for len(w.stack) > 0 && w.n <= limit {
		f := &w.stack[len(w.stack)-1]
		i := f.i
		f.i++
		switch v := f.v.(type) {
		case *glua.LTable:
			switch n := v.HeldLen(); {
			case i < n:
				k, x := v.HeldAt(i)
				if x == glua.LNil {
					continue
				}
				if k != nil {
					w.add(k)
				}
				w.add(x)
			case i == n:
				w.pop()
				w.add(v.Metatable)
			}
		case *glua.LFunction:
			switch n := len(v.Upvalues); {
			case i < n:
				if uv := v.Upvalues[i]; uv != nil {
					w.add(uv.Value())
				}
			case i == n:
				w.pop()
				if v.Env != nil {
					w.add(v.Env)
				}
			}
		case *glua.LUserData:
			w.pop()
			w.add(v.Metatable)
			if v.Env != nil {
				w.add(v.Env)
			}
		}
	}
	w.stack = w.stack[:0]
	return w.n
}

func (w *liveWalk) pop() { w.stack = w.stack[:len(w.stack)-1] }

// add counts a value where it is found: a string or a number at once, a
// container (its own storage) the first time it is found, after which it
// is walked.
func (w *liveWalk) add(v glua.LValue) {
	switch v := v.(type) {
	case glua.LString:
		if len(v) >= bigString {
			p := unsafe.StringData(string(v))
			if _, ok := w.strs[p]; ok {
				return
			}
			w.strs[p] = struct{}{}
		}
		w.n += int64(len(v)) + 16
	case glua.LNumber:
		w.n += 8 // a number in an interface is boxed
	case *glua.LTable:
		if !v.Mark(w.gen) {
			w.n += int64(v.MemSize())
			w.stack = append(w.stack, walkFrame{v: v})
		}
	case *glua.LFunction:
		if !v.Mark(w.gen) {
			// The LFunction, its upvalue slice and each Upvalue.
			w.n += 96 + 64*int64(len(v.Upvalues))
			w.stack = append(w.stack, walkFrame{v: v})
		}
	case *glua.LUserData:
		if !v.Mark(w.gen) {
			w.n += 32 + int64(glua.UserDataSize(v))
			w.stack = append(w.stack, walkFrame{v: v})
		}
	}
}

// A call's deadline. Each runner keeps one context, derived from the
// script's stop context, for as long as it is not cancelled, and one timer:
// a call with a time limit arms the timer, which cancels the context when
// it fires, and a call that ran out makes a new context for the next. One
// timer per runner rather than one per call saves an allocation and the
// timer's setup on every record.

// armTimer arms the runner's timer for one call.
func (r *Runner) armTimer(d time.Duration) {
	if r.timer == nil {
		r.fired = make(chan struct{}, 1)
		r.timer = time.AfterFunc(d, func() {
			(*r.cur.Load())()
			r.fired <- struct{}{}
		})
		return
	}
	r.timer.Reset(d)
}

// disarmTimer stops the timer armed for the call that just ended and
// reports whether it fired. When it did, it waits for the timer's function
// to finish, so that the function cannot cancel the next call's context.
func (r *Runner) disarmTimer() bool {
	if r.timer.Stop() {
		return false
	}
	<-r.fired
	return true
}

// callContext returns the context of the runner's next call, making it
// when there is none yet or the script's stop context changed.
func (r *Runner) callContext() {
	stop := r.s.stopContext()
	if r.ctx == nil || r.parent != stop {
		if r.cancel != nil {
			r.cancel()
		}
		r.parent = stop
		r.ctx, r.cancel = context.WithCancel(stop)
		cancel := r.cancel
		r.cur.Store(&cancel)
		r.L.SetContext(r.ctx)
	}
}

// stopContext is the context the script's calls derive from: Background
// until BindContext.
func (s *Script) stopContext() context.Context {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.stop == nil {
		return context.Background()
	}
	return s.stop
}

// BindContext makes the script's calls end when ctx does: once ctx is
// done, the calls in progress and those that start later have until the
// time limit, or a second if that is shorter or there is none, to finish,
// and are then stopped, each faulting its record with timeout. A pipeline binds its
// run's context so that a signal ends the run even while a script loops,
// while the calls of a batch in hand that end in time finish as usual.
func (s *Script) BindContext(ctx context.Context) {
	grace := time.Second
	if s.Timeout > 0 {
		grace = min(s.Timeout, grace)
	}
	stop, cancel := context.WithCancel(context.Background())
	context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	s.stopMu.Lock()
	s.stop = stop
	s.stopMu.Unlock()
}

// loadState makes an LState with the script loaded: the sandbox, the
// memory guard and the top-level chunk run within the time limit.
func (s *Script) loadState() (*glua.LState, *glua.LFunction, *memGuard, error) {
	L := luasandbox.New(spec.DefaultLimits.MaxString)
	s.openScriptLibs(L)
	var g *memGuard
	if s.MemoryLimit > 0 {
		g = newMemGuard(L, s.MemoryLimit)
	}
	L.Push(L.NewFunctionFromProto(s.proto))
	var cancel context.CancelFunc
	if s.Timeout > 0 {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(context.Background(), s.Timeout)
		L.SetContext(ctx)
	}
	err := L.PCall(0, 0, nil)
	timedOut := false
	if cancel != nil {
		timedOut = err != nil && L.Context().Err() != nil
		cancel()
		L.RemoveContext()
	}
	switch {
	case timedOut:
		err = fmt.Errorf("%s: the top-level chunk ran past the time limit (%v)", s.Name, s.Timeout)
	case g != nil && g.exceeded:
		err = fmt.Errorf("%s: the top-level chunk passed the memory limit (%d bytes)", s.Name, s.MemoryLimit)
	case err != nil:
		err = fmt.Errorf("%s: %s", s.Name, luaMessage(err))
	}
	if err != nil {
		L.Close()
		return nil, nil, nil, err
	}
	fn, ok := L.GetGlobal(s.Call).(*glua.LFunction)
	if !ok {
		L.Close()
		return nil, nil, nil, fmt.Errorf("%s: the script defines no function %s", s.Name, s.Call)
	}
	return L, fn, g, nil
}

// renew replaces the runner's LState with a fresh one, after a call that
// passed the memory limit: the old one may hold anything up to the limit,
// and the script's globals may be half made.
func (r *Runner) renew() {
	if r.cancel != nil {
		r.cancel()
	}
	r.ctx, r.cancel, r.parent = nil, nil, nil
	if r.L != nil {
		r.L.Close()
	}
	r.L, r.fn, r.mem = nil, nil, nil
	if L, fn, g, err := r.s.loadState(); err == nil {
		r.setState(L, fn, g)
	}
}
