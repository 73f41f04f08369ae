package check

import (
	"fmt"

	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
)

// signature is a built-in's typing, read from its row in package builtin:
// the parameter and result types its Sig names, or, for the four whose
// signatures are not monomorphic (len, keys, exists, coalesce), a function
// that decides from the arguments' types.
type signature struct {
	params  []*types.Type
	result  *types.Type
	check   func(args []*types.Type) (*types.Type, *argError)
	narrows *types.Type // what an is_ test proves when it returns true
}

// polymorphic are the built-ins typed by a function rather than by their Sig.
var polymorphic = map[builtin.ID]func([]*types.Type) (*types.Type, *argError){
	builtin.Len:      checkLen,
	builtin.Keys:     checkKeys,
	builtin.Exists:   checkExists,
	builtin.Coalesce: checkCoalesce,
}

var signatures [builtin.NumIDs]signature

func init() {
	for id, c := range polymorphicA {
		polymorphic[id] = c
	}
	for _, f := range builtin.All() {
		signatures[f.ID] = newSignature(f)
	}
}

// newSignature types f from its row; a row whose types do not parse is a
// bug in the table, caught when the package loads.
func newSignature(f *builtin.Func) signature {
	must := func(s string) *types.Type {
		t, err := types.Parse(s)
		if err != nil {
			panic("check: built-in " + f.Name + ": " + err.Error())
		}
		return t
	}
	var sig signature
	if f.Narrows != "" {
		sig.narrows = must(f.Narrows)
	}
	if c := polymorphic[f.ID]; c != nil {
		sig.check = c
		return sig
	}
	for _, p := range f.Params {
		sig.params = append(sig.params, must(p.Type))
	}
	sig.result = must(f.Result)
	return sig
}

// argReason says what is wrong with a call's arguments.
type argReason int

const (
	badCount    argReason = iota // wrong number of arguments
	badType                      // an argument of the wrong type
	notPresent                   // an optional argument where a value is needed
	needsNarrow                  // an any argument where a typed value is needed
)

// argError is a problem with a call's arguments. Arg is the argument's
// index (-1 for a count error); Want says what was expected there.
type argError struct {
	Reason argReason
	Arg    int
	Want   string
	Msg    string
}

func (e *argError) Error() string { return e.Msg }

// checkArgs checks the argument types of a call of f and returns the
// result type. Arguments whose type is invalid (already reported) are
// accepted, so one mistake gives one diagnostic.
func checkArgs(f *builtin.Func, args []*types.Type) (*types.Type, *argError) {
	sig := &signatures[f.ID]
	if sig.check != nil {
		return sig.check(args)
	}
	if len(args) < f.MinArgs() || len(args) > len(sig.params) {
		return sig.result, countError(f, len(args))
	}
	for i, a := range args {
		if err := typeError(i, a, sig.params[i]); err != nil {
			return sig.result, err
		}
	}
	return sig.result, nil
}

func countError(f *builtin.Func, n int) *argError {
	lo, hi := f.MinArgs(), len(f.Params)
	s := "s"
	if hi == 1 {
		s = ""
	}
	want := fmt.Sprint(hi)
	switch {
	case f.Variadic():
		want = fmt.Sprint("at least ", lo)
		if lo == 1 {
			s = ""
		}
	case lo == hi-1:
		want = fmt.Sprintf("%d or %d", lo, hi)
	case lo < hi:
		want = fmt.Sprintf("%d to %d", lo, hi)
	}
	return &argError{Reason: badCount, Arg: -1, Want: f.Sig,
		Msg: fmt.Sprintf("%s takes %s argument%s, got %d", f.Name, want, s, n)}
}

// typeError explains why an argument of type a cannot be passed where want is
// expected, or returns nil when it can.
func typeError(i int, a, want *types.Type) *argError {
	if types.AssignableTo(a, want) {
		return nil
	}
	e := &argError{Reason: badType, Arg: i, Want: want.String()}
	switch {
	case a.IsOptional() && types.AssignableTo(types.NonOptional(a), want):
		e.Reason = notPresent
		e.Msg = fmt.Sprintf("argument %d may be absent or null (%s), want %s", i+1, a, want)
	case types.NonOptional(a).Kind == types.Any:
		e.Reason = needsNarrow
		e.Msg = fmt.Sprintf("argument %d is %s, want %s", i+1, a, want)
	default:
		e.Msg = fmt.Sprintf("argument %d is %s, want %s", i+1, a, want)
	}
	return e
}

func checkLen(args []*types.Type) (*types.Type, *argError) {
	if len(args) != 1 {
		return types.IntType, &argError{Reason: badCount, Arg: -1, Want: "one argument", Msg: fmt.Sprintf("len takes 1 argument, got %d", len(args))}
	}
	return types.IntType, sized(args[0], builtin.Len.String(), true)
}

func checkKeys(args []*types.Type) (*types.Type, *argError) {
	r := types.ArrayOf(types.StringType)
	if len(args) != 1 {
		return r, &argError{Reason: badCount, Arg: -1, Want: "one argument", Msg: fmt.Sprintf("keys takes 1 argument, got %d", len(args))}
	}
	return r, sized(args[0], builtin.Keys.String(), false)
}

// sized checks the argument of len (strings too) and keys (maps, objects).
func sized(a *types.Type, name string, strings bool) *argError {
	want := "map or object"
	if strings {
		want = "string, array, map or object"
	}
	base := types.NonOptional(a)
	ok := base.IsInvalid() || base.Kind == types.Map || base.Kind == types.Object ||
		strings && (base.Kind == types.String || base.Kind == types.Array)
	switch {
	case !ok && base.Kind == types.Any:
		return &argError{Reason: needsNarrow, Arg: 0, Want: want, Msg: fmt.Sprintf("%s needs a %s, got %s", name, want, a)}
	case !ok:
		return &argError{Reason: badType, Arg: 0, Want: want, Msg: fmt.Sprintf("%s needs a %s, got %s", name, want, a)}
	case a.IsOptional():
		return &argError{Reason: notPresent, Arg: 0, Want: want, Msg: fmt.Sprintf("%s needs a %s, got %s, which may be absent", name, want, a)}
	}
	return nil
}

func checkExists(args []*types.Type) (*types.Type, *argError) {
	if len(args) != 1 {
		return types.BoolType, &argError{Reason: badCount, Arg: -1, Want: "one path", Msg: fmt.Sprintf("exists takes 1 argument, got %d", len(args))}
	}
	return types.BoolType, nil
}

// checkCoalesce types coalesce(a, b, ..., c): the arguments must join, and the
// result is optional only when the last one is.
func checkCoalesce(args []*types.Type) (*types.Type, *argError) {
	if len(args) < 2 {
		return types.InvalidType, &argError{Reason: badCount, Arg: -1, Want: "at least two arguments", Msg: fmt.Sprintf("coalesce takes at least 2 arguments, got %d", len(args))}
	}
	var acc *types.Type = types.NeverType
	for i, a := range args {
		j, ok := types.Join(acc, types.NonOptional(a))
		if !ok {
			return types.InvalidType, &argError{Reason: badType, Arg: i, Want: acc.String(),
				Msg: fmt.Sprintf("coalesce argument %d is %s, but the ones before are %s", i+1, a, acc)}
		}
		acc = j
	}
	if args[len(args)-1].IsOptional() {
		return types.OptionalOf(acc), nil
	}
	return acc, nil
}
