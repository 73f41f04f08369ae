// Package luasandbox is the ground both Lua users of the module stand on —
// the policy backend (package lua) and the Fluent Bit-style script runner
// (package luascript): an LState with only the safe libraries, source
// compiled once for any number of LStates, a pool of runners, and the
// conversions of Lua numbers and map keys both make per record.
package luasandbox

import (
	"math"
	"strings"
	"sync"

	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"
	"github.com/policyrun/policyrun/internal/third_party/gopher-lua/parse"
)

// Compile compiles Lua source once into a prototype that any number of
// LStates can load.
func Compile(src, name string) (*glua.FunctionProto, error) {
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		return nil, err
	}
	return glua.Compile(chunk, name)
}

// New returns an LState with only the safe libraries: base (without the
// functions that load code or files, and without print), table, string
// and math; string.rep refuses a result of more than maxString bytes.
func New(maxString int) *glua.LState {
	L := glua.NewState(glua.Options{SkipOpenLibs: true})
	for _, lib := range []struct {
		name string
		fn   glua.LGFunction
	}{
		{glua.BaseLibName, glua.OpenBase},
		{glua.TabLibName, glua.OpenTable},
		{glua.StringLibName, glua.OpenString},
		{glua.MathLibName, glua.OpenMath},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(glua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, name := range []string{"dofile", "loadfile", "load", "loadstring", "require", "module",
		"collectgarbage", "getfenv", "setfenv", "newproxy", "_printregs", "print"} {
		L.SetGlobal(name, glua.LNil)
	}
	// string.rep is the one call that can ask for gigabytes at once; a
	// budget of time would not stop it.
	if str, ok := L.GetGlobal("string").(*glua.LTable); ok {
		rep := str.RawGetString("rep")
		str.RawSetString("rep", L.NewFunction(func(L *glua.LState) int {
			s, n := L.CheckString(1), L.CheckInt(2)
			if n > 0 && int64(len(s))*int64(n) > int64(maxString) {
				L.RaiseError("string.rep: the result would be over %d bytes", maxString)
			}
			L.Push(rep)
			L.Push(glua.LString(s))
			L.Push(glua.LNumber(n))
			L.Call(2, 1)
			return 1
		}))
	}
	return L
}

// Pool holds the runners (each with its own LState) of a compiled
// program or script, made on demand, so that one program serves many
// goroutines.
type Pool[R any] struct {
	pool sync.Pool
}

// Get returns a pooled runner, or a new one from newRunner.
func (p *Pool[R]) Get(newRunner func() (R, error)) (R, error) {
	if r, ok := p.pool.Get().(R); ok {
		return r, nil
	}
	return newRunner()
}

// Put gives a runner back to the pool.
func (p *Pool[R]) Put(r R) { p.pool.Put(r) }

// Int converts an int held in a Lua number back to int64, saturating
// outside the int64 range (beyond ±2^53 the backends need not agree).
func Int(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// KeyCache holds the Lua strings of map keys seen before. Lua interns its
// strings, so pushing a key Lua already holds costs a lookup, not an
// allocation; the cache gives gopher-lua the same for the keys records
// repeat. It is bounded: a stream of distinct keys cannot grow it forever.
type KeyCache map[string]glua.LString

// Get returns the Lua string of the key b.
func (c *KeyCache) Get(b []byte) glua.LString {
	if k, ok := (*c)[string(b)]; ok {
		return k
	}
	if *c == nil || len(*c) >= 4096 {
		*c = KeyCache{}
	}
	k := glua.LString(string(b))
	(*c)[string(k)] = k
	return k
}
