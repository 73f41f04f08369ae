package luascript

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/policyrun/policyrun/internal/strftime"
	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"
)

// openScriptLibs gives a filter script's LState what Fluent Bit's LuaJIT
// has and the sandbox does not: Lua 5.1's os time functions, print (to
// the Script's Stderr, never to an output) and a string.gsub that, as Lua
// 5.1's, always returns a string. Nothing that reaches the host is there:
// os.execute, exit, remove, rename, tmpname and setlocale stay absent, and
// os.getenv answers only with AllowGetenv.
func (s *Script) openScriptLibs(L *glua.LState) {
	osT := L.NewTable()
	for name, fn := range map[string]glua.LGFunction{
		"time":     s.osTime,
		"date":     s.osDate,
		"clock":    osClock,
		"difftime": osDifftime,
		"getenv":   s.osGetenv,
	} {
		osT.RawSetString(name, L.NewFunction(fn))
	}
	L.SetGlobal("os", osT)
	L.SetGlobal("print", L.NewFunction(s.print))
	if str, ok := L.GetGlobal("string").(*glua.LTable); ok {
		gsub := str.RawGetString("gsub")
		str.RawSetString("gsub", L.NewFunction(func(L *glua.LState) int {
			// gopher-lua gives a number subject back unchanged when
			// nothing matches; Lua 5.1 converts it to a string first.
			if n, ok := L.Get(1).(glua.LNumber); ok {
				L.Replace(1, glua.LString(n.String()))
			}
			top := L.GetTop()
			L.Insert(gsub, 1)
			L.Call(top, 2)
			return 2
		}))
	}
}

func (s *Script) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

func (s *Script) location() *time.Location {
	if s.Location != nil {
		return s.Location
	}
	return time.Local
}

// osTime is os.time([t]): now, or the local time of the table t (year,
// month and day required; hour 12, min and sec 0 by default; fields out of
// range are normalised, as mktime does), in whole seconds.
func (s *Script) osTime(L *glua.LState) int {
	if L.GetTop() == 0 || L.Get(1) == glua.LNil {
		L.Push(glua.LNumber(s.now().Unix()))
		return 1
	}
	t := L.CheckTable(1)
	field := func(key string, def int) int {
		switch v := t.RawGetString(key).(type) {
		case glua.LNumber:
			return int(v)
		case glua.LString:
			if f, err := strconv.ParseFloat(strings.TrimSpace(string(v)), 64); err == nil {
				return int(f)
			}
		}
		if def < 0 {
			L.RaiseError("field '%s' missing in date table", key)
		}
		return def
	}
	sec, min, hour := field("sec", 0), field("min", 0), field("hour", 12)
	day, month, year := field("day", -1), field("month", -1), field("year", -1)
	tm := time.Date(year, time.Month(month), day, hour, min, sec, 0, s.location())
	L.Push(glua.LNumber(tm.Unix()))
	return 1
}

// osDate is os.date([format [, time]]): format "*t" gives a table, any
// other is strftime's (C locale); a leading '!' means UTC. The default
// format is "%c" and the default time now.
func (s *Script) osDate(L *glua.LState) int {
	format := L.OptString(1, "%c")
	var tm time.Time
	if L.Get(2) == glua.LNil {
		tm = s.now()
	} else {
		tm = time.Unix(int64(L.CheckNumber(2)), 0)
	}
	if strings.HasPrefix(format, "!") {
		format = format[1:]
		tm = tm.UTC()
	} else {
		tm = tm.In(s.location())
	}
	if strings.HasPrefix(format, "*t") {
		t := L.CreateTable(0, 9)
		for _, f := range []struct {
			k string
			v int
		}{{"year", tm.Year()}, {"month", int(tm.Month())}, {"day", tm.Day()},
			{"hour", tm.Hour()}, {"min", tm.Minute()}, {"sec", tm.Second()},
			{"wday", int(tm.Weekday()) + 1}, {"yday", tm.YearDay()}} {
			t.RawSetString(f.k, glua.LNumber(f.v))
		}
		t.RawSetString("isdst", glua.LBool(tm.IsDST()))
		L.Push(t)
		return 1
	}
	L.Push(glua.LString(strftime.AppendC(nil, tm, format)))
	return 1
}

// osClock is os.clock(): the CPU time of the process, in seconds, as C's
// clock() gives it.
func osClock(L *glua.LState) int {
	L.Push(glua.LNumber(processCPU().Seconds()))
	return 1
}

// osDifftime is os.difftime(t2 [, t1]): t2 - t1 in seconds.
func osDifftime(L *glua.LState) int {
	t2 := float64(L.CheckNumber(1))
	t1 := float64(L.OptNumber(2, 0))
	d := t2 - t1
	if math.IsNaN(d) {
		d = 0
	}
	L.Push(glua.LNumber(d))
	return 1
}

// osGetenv is os.getenv(name): the variable, or nil when unset; an error
// unless the Script allows it, so that a filter learns nothing of the
// host by default.
func (s *Script) osGetenv(L *glua.LState) int {
	name := L.CheckString(1)
	if !s.AllowGetenv {
		L.RaiseError("os.getenv is disabled (allow_getenv: true on the filter enables it)")
	}
	if v, ok := os.LookupEnv(name); ok {
		L.Push(glua.LString(v))
	} else {
		L.Push(glua.LNil)
	}
	return 1
}

// print is Lua's print (its arguments through tostring, tab-separated),
// written to the Script's Stderr with every line prefixed by its
// PrintPrefix, one write per call.
func (s *Script) print(L *glua.LState) int {
	var text strings.Builder
	for i := 1; i <= L.GetTop(); i++ {
		if i > 1 {
			text.WriteByte('\t')
		}
		text.WriteString(L.ToStringMeta(L.Get(i)).String())
	}
	prefix := s.PrintPrefix
	if prefix == "" {
		prefix = s.Name
	}
	var out bytes.Buffer
	for _, line := range strings.Split(text.String(), "\n") {
		fmt.Fprintf(&out, "%s: %s\n", prefix, line)
	}
	w := s.Stderr
	if w == nil {
		w = os.Stderr
	}
	s.printMu.Lock()
	w.Write(out.Bytes())
	s.printMu.Unlock()
	return 0
}
