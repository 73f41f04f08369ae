package check

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/strftime"
	"github.com/policyrun/policyrun/internal/suggest"
	"github.com/policyrun/policyrun/policy"
)

// The typing of the built-ins of docs/language.md's first groups (time, maps,
// arrays, strings, numbers, OTLP, identity): those whose types depend on
// their arguments', the arguments that must be constants, and the
// defaults of left-out arguments.

// polymorphicA are part A's built-ins typed by a function rather than by
// their Sig (merged into polymorphic when the package loads).
var polymorphicA = map[builtin.ID]func([]*types.Type) (*types.Type, *argError){
	builtin.FromUnix: func(args []*types.Type) (*types.Type, *argError) {
		return types.TimestampType, want(builtin.FromUnix, args, number, string_)
	},

	builtin.Merge: func(args []*types.Type) (*types.Type, *argError) {
		if err := want(builtin.Merge, args, container, container); err != nil {
			return types.InvalidType, err
		}
		return mergeType(args[0], args[1]), nil
	},
	builtin.Flatten: func(args []*types.Type) (*types.Type, *argError) {
		if err := want(builtin.Flatten, args, container, string_); err != nil {
			return types.InvalidType, err
		}
		return types.MapOf(leafType(args[0])), nil
	},
	builtin.Unflatten: func(args []*types.Type) (*types.Type, *argError) {
		return types.MapOf(types.AnyType), want(builtin.Unflatten, args, container, string_)
	},
	builtin.KeepKeys: keysOf(builtin.KeepKeys),
	builtin.DropKeys: keysOf(builtin.DropKeys),
	builtin.Values: func(args []*types.Type) (*types.Type, *argError) {
		if err := want(builtin.Values, args, container); err != nil {
			return types.InvalidType, err
		}
		return types.ArrayOf(valueType(args[0])), nil
	},

	builtin.Append: func(args []*types.Type) (*types.Type, *argError) {
		if err := want(builtin.Append, args, array, present); err != nil {
			return types.InvalidType, err
		}
		a, v := args[0], args[1]
		if a.IsInvalid() || v.IsInvalid() {
			return types.InvalidType, nil
		}
		elem, ok := types.Join(a.Elem, v)
		if !ok {
			return types.InvalidType, &argError{Reason: badType, Arg: 1, Want: a.Elem.String(),
				Msg: fmt.Sprintf("argument 2 is %s, and the elements of the array are %s", v, a.Elem)}
		}
		return types.ArrayOf(elem), nil
	},
	builtin.Includes: func(args []*types.Type) (*types.Type, *argError) {
		if err := want(builtin.Includes, args, array, present); err != nil {
			return types.BoolType, err
		}
		if a, v := args[0], args[1]; !a.IsInvalid() && !types.Comparable(a.Elem, v) {
			return types.BoolType, &argError{Reason: badType, Arg: 1, Want: a.Elem.String(),
				Msg: fmt.Sprintf("argument 2 is %s, and the elements of the array are %s: they are never equal", v, a.Elem)}
		}
		return types.BoolType, nil
	},
	builtin.Unique: func(args []*types.Type) (*types.Type, *argError) {
		if err := want(builtin.Unique, args, array); err != nil {
			return types.InvalidType, err
		}
		return args[0], nil
	},
	builtin.Format: func(args []*types.Type) (*types.Type, *argError) {
		if len(args) < 1 {
			return types.StringType, countError(builtin.ByID(builtin.Format), len(args))
		}
		// The other arguments are checked against the verbs (formatArgs).
		return types.StringType, string_(0, args[0])
	},
	builtin.Round: func(args []*types.Type) (*types.Type, *argError) {
		return types.FloatType, want(builtin.Round, args, number, int_)
	},
	builtin.Floor: func(args []*types.Type) (*types.Type, *argError) {
		return types.IntType, want(builtin.Floor, args, number)
	},
	builtin.Ceil: func(args []*types.Type) (*types.Type, *argError) {
		return types.IntType, want(builtin.Ceil, args, number)
	},
	builtin.Abs: func(args []*types.Type) (*types.Type, *argError) {
		if err := want(builtin.Abs, args, number); err != nil {
			return types.InvalidType, err
		}
		return args[0], nil
	},
	builtin.Min: minMax(builtin.Min),
	builtin.Max: minMax(builtin.Max),
	builtin.Slice: func(args []*types.Type) (*types.Type, *argError) {
		if err := want(builtin.Slice, args, array, int_, int_); err != nil {
			return types.InvalidType, err
		}
		return args[0], nil
	},
}

// minMax types min and max: an int for two ints, else a float.
func minMax(id builtin.ID) func([]*types.Type) (*types.Type, *argError) {
	return func(args []*types.Type) (*types.Type, *argError) {
		if err := want(id, args, number, number); err != nil {
			return types.InvalidType, err
		}
		if args[0].Kind == types.Int && args[1].Kind == types.Int {
			return types.IntType, nil
		}
		if args[0].IsInvalid() || args[1].IsInvalid() {
			return types.InvalidType, nil
		}
		return types.FloatType, nil
	}
}

// present accepts any value, absent and null included (an element of
// append, the value includes looks for).
func present(int, *types.Type) *argError { return nil }

// keysOf types keep_keys and drop_keys: a map of m's type (refineCall
// makes an object's more precise from the pattern).
func keysOf(id builtin.ID) func([]*types.Type) (*types.Type, *argError) {
	return func(args []*types.Type) (*types.Type, *argError) {
		if err := want(id, args, container, string_); err != nil {
			return types.InvalidType, err
		}
		return args[0], nil
	}
}

// valueType is the type of any value of the map or object t.
func valueType(t *types.Type) *types.Type {
	switch {
	case t.Kind == types.Map:
		return t.Elem
	case t.Kind == types.Object && !t.Open:
		var ts []*types.Type
		for _, f := range t.Fields() {
			ts = append(ts, f.Type)
		}
		return joinAll(ts...)
	case t.IsInvalid():
		return types.InvalidType
	}
	return types.AnyType
}

// leafType is the type of the values flatten makes of the map or object
// t: its values, unless they may be maps themselves (whose leaves, or
// which, when empty, are kept as they are, may be anything).
func leafType(t *types.Type) *types.Type {
	v := valueType(t)
	nested := func(x *types.Type) bool {
		k := types.NonOptional(x).Kind
		return k == types.Map || k == types.Object || k == types.Any
	}
	if t.Kind == types.Object {
		for _, f := range t.Fields() {
			if nested(f.Type) {
				return types.AnyType
			}
		}
		return v
	}
	if nested(v) {
		return types.AnyType
	}
	return v
}

// mergeType is the type of merge(a, b): two objects make an object, its
// fields a's then b's new ones, each of the type of b's field where b
// always has it and of a join where it may not; with a map, a map of the
// join of both value types.
func mergeType(a, b *types.Type) *types.Type {
	if a.IsInvalid() || b.IsInvalid() {
		return types.InvalidType
	}
	if a.Kind != types.Object || b.Kind != types.Object {
		return types.MapOf(joinAll(valueType(a), valueType(b)))
	}
	var fields []types.Field
	for _, f := range a.Fields() {
		if _, ok := b.Field(f.Name); !ok && b.Open {
			// An undeclared key of b may replace it with anything.
			if f.Type.IsOptional() {
				f.Type = types.OptionalOf(types.AnyType)
			} else {
				f.Type = types.AnyType
			}
		}
		fields = append(fields, f)
	}
	for _, bf := range b.Fields() {
		t := bf.Type
		if af, ok := a.Field(bf.Name); ok && bf.Type.IsOptional() {
			t = types.Merge(af.Type, bf.Type) // absent from b: a's
		} else if !ok && a.Open && bf.Type.IsOptional() {
			t = types.OptionalOf(types.AnyType) // absent from b: a's undeclared key
		}
		fields = append(fields, types.Field{Name: bf.Name, Type: t, Decl: bf.Decl})
	}
	return types.ObjectOf(a.Open || b.Open, fields...)
}

// An argCheck checks argument i of type a.
type argCheck func(i int, a *types.Type) *argError

// want checks the arguments of a call of f, one check each.
func want(f builtin.ID, args []*types.Type, checks ...argCheck) *argError {
	if len(args) != len(checks) {
		return countError(builtin.ByID(f), len(args))
	}
	for i, a := range args {
		if err := checks[i](i, a); err != nil {
			return err
		}
	}
	return nil
}

// is checks for an argument assignable to t.
func is(t *types.Type) argCheck {
	return func(i int, a *types.Type) *argError { return typeError(i, a, t) }
}

var (
	string_ = is(types.StringType)
	int_    = is(types.IntType)
)

// number checks for an int or a float.
func number(i int, a *types.Type) *argError {
	return kinds(i, a, "int or float", types.Int, types.Float)
}

// container checks for a map or an object.
func container(i int, a *types.Type) *argError {
	return kinds(i, a, "map or object", types.Map, types.Object)
}

// array checks for an array.
func array(i int, a *types.Type) *argError {
	return kinds(i, a, "array", types.Array)
}

// wantOf is a type of each kind of argument that kinds checks for, for
// the hint of an any argument.
var wantOf = map[string]*types.Type{
	"map or object": types.MapOf(types.AnyType),
	"array":         types.ArrayOf(types.AnyType),
	"int or float":  types.FloatType,
}

// kinds checks for a present value of one of the kinds ks, what saying
// what they are.
func kinds(i int, a *types.Type, what string, ks ...types.Kind) *argError {
	base := types.NonOptional(a)
	ok := base.IsInvalid() || base.Kind == types.Never
	for _, k := range ks {
		ok = ok || base.Kind == k
	}
	switch {
	case !ok && base.Kind == types.Any:
		return &argError{Reason: needsNarrow, Arg: i, Want: what, Msg: fmt.Sprintf("argument %d is %s, want %s", i+1, a, what)}
	case !ok:
		return &argError{Reason: badType, Arg: i, Want: what, Msg: fmt.Sprintf("argument %d is %s, want %s", i+1, a, what)}
	case a.IsOptional():
		return &argError{Reason: notPresent, Arg: i, Want: what, Msg: fmt.Sprintf("argument %d may be absent or null (%s), want %s", i+1, a, what)}
	}
	return nil
}

// defaults returns the argument types of the call e of f with those of the
// defaults of left-out arguments added, recording the defaults' literals
// (Info.Defaults, Info.Types) for the backends.
func (c *checker) defaults(e *policy.CallExpr, f *builtin.Func, args []*types.Type) []*types.Type {
	n := len(e.Args)
	if f.Variadic() || n < f.MinArgs() || n >= len(f.Params) {
		return args
	}
	all, ok := c.info.Defaults[e]
	if !ok {
		all = append([]policy.Expr(nil), e.Args...)
		for _, p := range f.Params[n:] {
			all = append(all, defaultLit(e.Rparen, p))
		}
		c.info.Defaults[e] = all
	}
	for _, lit := range all[n:] {
		t := litType(lit.(*policy.BasicLit))
		c.info.Types[lit] = t
		args = append(args, t)
	}
	return args
}

// defaultLit is the literal of p's default, placed at pos.
func defaultLit(pos policy.Pos, p builtin.Param) *policy.BasicLit {
	lit := &policy.BasicLit{ValuePos: pos, Raw: p.Default}
	if strings.HasPrefix(p.Default, `"`) {
		lit.Kind, lit.Str = policy.LitString, p.DefaultString()
	} else {
		lit.Kind = policy.LitInt
		lit.Int, _ = strconv.ParseInt(p.Default, 10, 64) // builtin checked it
	}
	return lit
}

// constParam checks that the argument of the call e of f that its
// signature says is constant is one (literalArg), and that it means
// something (constValue); args are the types of e's arguments.
func (c *checker) constParam(e *policy.CallExpr, f *builtin.Func, args []*types.Type) {
	if a, lit, ok := c.literalArg(e, f, f.ConstArg, args, CodeNotConst, constWhat(f), constHint(f)); ok {
		c.constValue(f, a, lit)
	}
}

// constWhat names the constant argument of f: zone, unit or format.
func constWhat(f *builtin.Func) string {
	if what := map[string]string{"tz": "zone", "fmt": "format"}[f.Const]; what != "" {
		return what
	}
	return f.Const
}

// constValue checks that the constant lit, argument a of f, is a zone
// name or a unit (a format is checked with the arguments, in formatArgs).
func (c *checker) constValue(f *builtin.Func, a policy.Expr, lit *policy.BasicLit) {
	switch f.ID {
	case builtin.ParseTime, builtin.FormatTime:
		if _, err := strftime.Zone(lit.Str); err != nil {
			d := diag.Errorf(a, CodeZone, "unknown time zone %s", policy.Quote(lit.Str)).
				WithLabel("%s", err)
			if s := suggest.Closest(lit.Str, commonZones); s != "" && s != lit.Str {
				d = d.WithHint("did you mean %s? Zone names are IANA names, case-sensitive", policy.Quote(s))
			} else {
				d = d.WithHint("%s", constHint(f))
			}
			c.report(d)
		}
	case builtin.FromUnix:
		if !unixUnits[lit.Str] {
			d := diag.Errorf(a, CodeUnit, "unknown unit %s", policy.Quote(lit.Str)).
				WithLabel("from_unix counts in s, ms, us or ns")
			if s := suggest.Closest(lit.Str, []string{"s", "ms", "us", "ns"}); s != "" {
				d = d.WithHint("did you mean %s?", policy.Quote(s))
			} else {
				d = d.WithHint("%s", constHint(f))
			}
			c.report(d)
		}
	}
}

var unixUnits = map[string]bool{"s": true, "ms": true, "us": true, "ns": true}

// commonZones are names the zone hint suggests from (the checker takes any
// name of the tz database).
var commonZones = []string{"UTC", "Europe/London", "Europe/Paris", "Europe/Berlin", "Europe/Madrid",
	"Europe/Rome", "Europe/Amsterdam", "Europe/Moscow", "America/New_York", "America/Chicago",
	"America/Denver", "America/Los_Angeles", "America/Sao_Paulo", "America/Toronto", "Asia/Tokyo",
	"Asia/Shanghai", "Asia/Kolkata", "Asia/Singapore", "Asia/Dubai", "Australia/Sydney", "Pacific/Auckland",
	"Africa/Johannesburg"}

func constHint(f *builtin.Func) string {
	switch f.ID {
	case builtin.ParseTime, builtin.FormatTime:
		return `write an IANA zone name as a literal, such as "Europe/Paris", "America/New_York" or "UTC"`
	case builtin.FromUnix:
		return `write the unit as a literal: "s", "ms", "us" or "ns"`
	case builtin.Format:
		return `formats are checked against the arguments when the policy is checked: write it as a literal, e.g. format("%s took %dms", .path, .ms)`
	}
	return "it is checked when the policy is checked: write it as a literal"
}

// refineCall returns the result type of a call of f whose arguments
// checked, made more precise where the arguments' expressions tell more
// than their types.
func (c *checker) refineCall(e *policy.CallExpr, f *builtin.Func, args []*types.Type, res *types.Type) *types.Type {
	switch f.ID {
	case builtin.Format:
		c.formatArgs(e, args)
	case builtin.KeepKeys, builtin.DropKeys:
		// The pattern is known: so is which fields of an object stay.
		re := c.info.Regexps[e.Args[f.RegexArg]]
		if res.Kind != types.Object || re == nil {
			return res
		}
		var fields []types.Field
		for _, fd := range res.Fields() {
			if re.MatchString(fd.Name) == (f.ID == builtin.KeepKeys) {
				fields = append(fields, fd)
			}
		}
		return types.ObjectOf(res.Open, fields...)
	}
	return res
}

// joinAll joins ts as a value that is any of them: any when they do not
// join (any? becomes any, which holds null too).
func joinAll(ts ...*types.Type) *types.Type {
	var acc *types.Type = types.NeverType
	for _, t := range ts {
		acc = types.Merge(acc, t)
	}
	if types.NonOptional(acc).Kind == types.Any {
		return types.AnyType
	}
	return acc
}
