package builtin

import (
	"fmt"

	"github.com/policyrun/policyrun/compiler/types"
)

// CheckArgs checks the argument types of a call of f and returns the
// result type. Arguments whose type is invalid (already reported) are
// accepted, so one mistake gives one diagnostic.
func (f *Func) CheckArgs(args []*types.Type) (*types.Type, *ArgError) {
	if f.Check != nil {
		return f.Check(args)
	}
	if len(args) != len(f.Params) {
		return f.Result, countError(f, len(args))
	}
	for i, a := range args {
		if err := argError(i, a, f.Params[i].Type); err != nil {
			return f.Result, err
		}
	}
	return f.Result, nil
}

func countError(f *Func, n int) *ArgError {
	want := len(f.Params)
	s := "s"
	if want == 1 {
		s = ""
	}
	return &ArgError{Reason: BadCount, Arg: -1, Want: f.Sig,
		Msg: fmt.Sprintf("%s takes %d argument%s, got %d", f.Name, want, s, n)}
}

// argError explains why an argument of type a cannot be passed where want is
// expected, or returns nil when it can.
func argError(i int, a, want *types.Type) *ArgError {
	if types.AssignableTo(a, want) {
		return nil
	}
	e := &ArgError{Reason: BadType, Arg: i, Want: want.String()}
	switch {
	case a.IsOptional() && types.AssignableTo(types.NonOptional(a), want):
		e.Reason = NotPresent
		e.Msg = fmt.Sprintf("argument %d may be absent or null (%s), want %s", i+1, a, want)
	case types.NonOptional(a).Kind == types.Any:
		e.Reason = NeedsNarrow
		e.Msg = fmt.Sprintf("argument %d is %s, want %s", i+1, a, want)
	default:
		e.Msg = fmt.Sprintf("argument %d is %s, want %s", i+1, a, want)
	}
	return e
}

func checkLen(args []*types.Type) (*types.Type, *ArgError) {
	if len(args) != 1 {
		return types.IntType, &ArgError{Reason: BadCount, Arg: -1, Want: "one argument", Msg: fmt.Sprintf("len takes 1 argument, got %d", len(args))}
	}
	return types.IntType, sized(args[0], "len", true)
}

func checkKeys(args []*types.Type) (*types.Type, *ArgError) {
	r := types.ArrayOf(types.StringType)
	if len(args) != 1 {
		return r, &ArgError{Reason: BadCount, Arg: -1, Want: "one argument", Msg: fmt.Sprintf("keys takes 1 argument, got %d", len(args))}
	}
	return r, sized(args[0], "keys", false)
}

// sized checks the argument of len (strings too) and keys (maps, objects).
func sized(a *types.Type, name string, strings bool) *ArgError {
	want := "map or object"
	if strings {
		want = "string, array, map or object"
	}
	base := types.NonOptional(a)
	ok := base.IsInvalid() || base.Kind == types.Map || base.Kind == types.Object ||
		strings && (base.Kind == types.String || base.Kind == types.Array)
	switch {
	case !ok && base.Kind == types.Any:
		return &ArgError{Reason: NeedsNarrow, Arg: 0, Want: want, Msg: fmt.Sprintf("%s needs a %s, got %s", name, want, a)}
	case !ok:
		return &ArgError{Reason: BadType, Arg: 0, Want: want, Msg: fmt.Sprintf("%s needs a %s, got %s", name, want, a)}
	case a.IsOptional():
		return &ArgError{Reason: NotPresent, Arg: 0, Want: want, Msg: fmt.Sprintf("%s needs a %s, got %s, which may be absent", name, want, a)}
	}
	return nil
}

func checkExists(args []*types.Type) (*types.Type, *ArgError) {
	if len(args) != 1 {
		return types.BoolType, &ArgError{Reason: BadCount, Arg: -1, Want: "one path", Msg: fmt.Sprintf("exists takes 1 argument, got %d", len(args))}
	}
	return types.BoolType, nil
}

// checkCoalesce types coalesce(a, b, ..., c): the arguments must join, and the
// result is optional only when the last one is.
func checkCoalesce(args []*types.Type) (*types.Type, *ArgError) {
	if len(args) < 2 {
		return types.InvalidType, &ArgError{Reason: BadCount, Arg: -1, Want: "at least two arguments", Msg: fmt.Sprintf("coalesce takes at least 2 arguments, got %d", len(args))}
	}
	var acc *types.Type = types.NeverType
	for i, a := range args {
		j, ok := types.Join(acc, types.NonOptional(a))
		if !ok {
			return types.InvalidType, &ArgError{Reason: BadType, Arg: i, Want: acc.String(),
				Msg: fmt.Sprintf("coalesce argument %d is %s, but the ones before are %s", i+1, a, acc)}
		}
		acc = j
	}
	if args[len(args)-1].IsOptional() {
		return types.OptionalOf(acc), nil
	}
	return acc, nil
}
