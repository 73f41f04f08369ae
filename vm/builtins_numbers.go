package vm

import (
	"math"
	"regexp"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/calc"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// The number built-ins: round, floor, ceil, abs, min, max (docs/semantics.md,
// Numbers). Their arguments are ints or floats, told apart by kind.

func init() {
	builtins[builtin.Round] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		r, ok := calc.Round(number(&args[0]), args[1].int())
		if !ok {
			return spec.NonFinite
		}
		*dst = Float(r)
		return spec.NoFault
	}
	builtins[builtin.Floor] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		if x := &args[0]; x.K == record.Int {
			*dst = *x
		} else {
			*dst = Int(calc.Floor(x.float()))
		}
		return spec.NoFault
	}
	builtins[builtin.Ceil] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		if x := &args[0]; x.K == record.Int {
			*dst = *x
		} else {
			*dst = Int(calc.Ceil(x.float()))
		}
		return spec.NoFault
	}
	builtins[builtin.Abs] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		switch x := &args[0]; {
		case x.K == record.Int && x.int() < 0:
			*dst = Int(-x.int()) // the least int wraps to itself
		case x.K == record.Int:
			*dst = *x
		default:
			*dst = Float(math.Abs(x.float()))
		}
		return spec.NoFault
	}
	builtins[builtin.Min] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		if x, y := &args[0], &args[1]; x.K == record.Int && y.K == record.Int {
			*dst = Int(min(x.int(), y.int()))
		} else {
			*dst = Float(min(number(x), number(y)))
		}
		return spec.NoFault
	}
	builtins[builtin.Max] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		if x, y := &args[0], &args[1]; x.K == record.Int && y.K == record.Int {
			*dst = Int(max(x.int(), y.int()))
		} else {
			*dst = Float(max(number(x), number(y)))
		}
		return spec.NoFault
	}
}

// number is the value of an int or a float register.
func number(x *Reg) float64 {
	if x.K == record.Int {
		return float64(x.int())
	}
	return x.float()
}
