package vm

import (
	"regexp"
	"time"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/calc"
	"github.com/policyrun/policyrun/internal/strftime"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// The time built-ins: parse_time and format_time in a zone, unix_seconds,
// unix_millis, from_unix, parse_duration (docs/semantics.md, Time).

func init() {
	builtins[builtin.ParseTime] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		if ns, ok := strftime.ParseIn(args[0].S, args[1].S, zone(args[2].S)); ok {
			*dst = Timestamp(ns)
		} else {
			*dst = Null()
		}
		return spec.NoFault
	}
	builtins[builtin.FormatTime] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		m.buf = strftime.AppendFormatIn(m.buf[:0], args[0].int(), args[1].S, zone(args[2].S))
		if r := m.checkLen(string(m.buf)); r != spec.NoFault {
			return r
		}
		m.newString(dst, m.buf)
		return spec.NoFault
	}
	builtins[builtin.UnixSeconds] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Int(calc.FloorDiv(args[0].int(), 1e9))
		return spec.NoFault
	}
	builtins[builtin.UnixMillis] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Int(calc.FloorDiv(args[0].int(), 1e6))
		return spec.NoFault
	}
	builtins[builtin.FromUnix] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		unit := calc.UnixUnit(args[1].S)
		if x := &args[0]; x.K == record.Int {
			*dst = Timestamp(calc.FromUnixInt(x.int(), unit))
		} else {
			*dst = Timestamp(calc.FromUnixFloat(x.float(), unit))
		}
		return spec.NoFault
	}
	builtins[builtin.ParseDuration] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		if d, err := time.ParseDuration(args[0].S); err != nil {
			*dst = Null()
		} else {
			*dst = Int(int64(d))
		}
		return spec.NoFault
	}
}

// zone is the location of a zone name the checker has accepted.
func zone(name string) *time.Location {
	if name == "UTC" {
		return time.UTC
	}
	loc, err := strftime.Zone(name)
	if err != nil {
		return time.UTC // not a checked program
	}
	return loc
}
