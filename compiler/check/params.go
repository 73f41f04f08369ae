package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/suggest"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/spec"
)

// CheckParams checks f as Check does, with the parameters given the values
// in params: each value becomes the literal its parameter stands for, so
// that it folds and a pattern made of it compiles now, as a const's would.
// A parameter without a default that params leaves out, a value of the
// wrong type and a value for no parameter are errors, every one reported.
// Check alone leaves the values to run time: it types each parameter by
// its declaration, and the file cannot be compiled while one has no value
// (Info.Unbound).
func CheckParams(f *policy.File, params spec.Params) (*Info, diag.List) {
	return check(f, params, true, nil)
}

// ErrUnbound is what a backend returns for a file checked without the
// values of its parameters (Info.Unbound): it has nothing to compile yet.
var ErrUnbound = errors.New("a parameter of the policy has no value: give it one (--param, params: in the config, a test's param line) or a default")

// paramType types the parameter k (constType calls it): its declared type,
// and the literal of its value, given or default, which its uses stand for.
func (c *checker) paramType(k *Const) *types.Type {
	d := k.Param
	t := c.typeExpr(d.Type)
	if t.IsInvalid() {
		return t
	}
	if !paramTypeOK(t) {
		c.report(diag.Errorf(d.Type, CodeParamType, "parameter %s cannot be %s", d.Name.Name, t).
			WithHint("a parameter is a bool, int, float or string, or an array or map of one of them"))
		return types.InvalidType
	}
	if v, ok := c.params[d.Name.Name]; ok {
		e, err := paramExpr(v, t, d.Name.NamePos)
		if err != "" {
			c.report(diag.Errorf(d.Name, CodeParamValue, "the value of parameter %s is %s, not %s", d.Name.Name, err, t).
				WithLabel("given at %s", where(v)).
				WithHint("give %s a value of type %s, such as %s", d.Name.Name, t, exampleValue(t)))
			return t
		}
		c.expr(e, &state{root: types.ObjectOf(true)})
		c.typeValue(e, t)
		k.Value = e
		return t
	}
	if d.Default != nil {
		c.paramDefault(d.Name, d.Default, t)
		k.Value = d.Default
		return t
	}
	if c.bound {
		c.report(diag.Errorf(d.Name, CodeParamMissing, "parameter %s has no value", d.Name.Name).
			WithLabel("declared without a default").
			WithHint("give it a value (--param %s=..., params: in the config, or param %s ... in a test), or a default: param %s: %s = ...",
				d.Name.Name, d.Name.Name, d.Name.Name, t))
		return t
	}
	c.info.Unbound = true
	return t
}

// unknownParams reports the values given for no declared parameter, in
// name order, at the header: they are not in the file.
func (c *checker) unknownParams() {
	declared := c.paramNames()
	var unknown []string
	for name := range c.params {
		if k := c.consts[name]; k == nil || k.Param == nil {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	h := c.file.Pos()
	for _, name := range unknown {
		d := diag.Errorf(span{h, h.Advance("policy")}, CodeParamUnknown, "policy %s has no parameter %s", c.file.Name, name).
			WithLabel("a value is given at %s", where(c.params[name]))
		if s := suggest.Closest(name, declared); s != "" {
			d = d.WithHint("did you mean %s?", s)
		} else {
			d = d.WithHint("remove the value, or declare the parameter: param %s: T", name)
		}
		c.report(d)
	}
}

// paramNames are the names of the file's parameters, for did-you-mean.
func (c *checker) paramNames() []string {
	var names []string
	for name, k := range c.consts {
		if k.Param != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func where(v spec.Param) string {
	if v.Where == "" {
		return "start"
	}
	return v.Where
}

// paramTypeOK reports whether a parameter may have type t: a value from a
// command line or a config is a JSON scalar, or an array or map of them.
func paramTypeOK(t *types.Type) bool {
	switch t.Kind {
	case types.Array, types.Map:
		return scalarParam(t.Elem)
	}
	return scalarParam(t)
}

func scalarParam(t *types.Type) bool {
	switch t.Kind {
	case types.Bool, types.Int, types.Float, types.String:
		return !t.IsOptional()
	}
	return false
}

// typeValue makes the types of the literal e of a parameter's value those
// of its declaration: an empty list is an array<string> there, an integer
// in a float array a float.
func (c *checker) typeValue(e policy.Expr, t *types.Type) {
	c.info.Types[e] = t
	switch e := e.(type) {
	case *policy.ListLit:
		for _, x := range e.Elems {
			c.typeValue(x, t.Elem)
		}
	case *policy.MapLit:
		for _, en := range e.Entries {
			c.typeValue(en.Value, t.Elem)
		}
	}
}

// paramExpr is the literal of the value v of a parameter of type t, at
// pos; or, when v is not of type t, what v is instead.
func paramExpr(v spec.Param, t *types.Type, pos policy.Pos) (policy.Expr, string) {
	x := v.Value
	if v.Raw {
		s, _ := x.(string)
		if t.Kind == types.String {
			return strLit(s, pos), ""
		}
		d := json.NewDecoder(bytes.NewReader([]byte(s)))
		d.UseNumber()
		if err := d.Decode(&x); err != nil || d.More() {
			x = s // not JSON: a bare word, which describeValue names
		}
	}
	return valueExpr(x, t, pos)
}

func valueExpr(v any, t *types.Type, pos policy.Pos) (policy.Expr, string) {
	switch t.Kind {
	case types.Bool:
		if b, ok := v.(bool); ok {
			return &policy.BasicLit{ValuePos: pos, Kind: policy.LitBool, Raw: strconv.FormatBool(b), Bool: b}, ""
		}
	case types.String:
		if s, ok := v.(string); ok {
			return strLit(s, pos), ""
		}
	case types.Int:
		if i, ok := intValue(v); ok {
			return &policy.BasicLit{ValuePos: pos, Kind: policy.LitInt, Raw: strconv.FormatInt(i, 10), Int: i}, ""
		}
	case types.Float:
		if f, ok := numberValue(v); ok {
			return &policy.BasicLit{ValuePos: pos, Kind: policy.LitFloat, Raw: strconv.FormatFloat(f, 'g', -1, 64), Float: f}, ""
		}
	case types.Array:
		if xs, ok := v.([]any); ok {
			l := &policy.ListLit{Lbrack: pos, Rbrack: pos}
			for i, x := range xs {
				e, err := valueExpr(x, t.Elem, pos)
				if err != "" {
					return nil, fmt.Sprintf("an array whose element %d is %s", i, err)
				}
				l.Elems = append(l.Elems, e)
			}
			return l, ""
		}
	case types.Map:
		if m, ok := stringMap(v); ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			l := &policy.MapLit{Lbrace: pos, Rbrace: pos}
			for _, k := range keys {
				e, err := valueExpr(m[k], t.Elem, pos)
				if err != "" {
					return nil, fmt.Sprintf("a map whose %s is %s", strconv.Quote(k), err)
				}
				l.Entries = append(l.Entries, &policy.MapEntry{Key: strLit(k, pos), Colon: pos, Value: e})
			}
			return l, ""
		}
	}
	return nil, describeValue(v)
}

func strLit(s string, pos policy.Pos) *policy.BasicLit {
	return &policy.BasicLit{ValuePos: pos, Kind: policy.LitString, Raw: policy.Quote(s), Str: s}
}

// intValue is v as an int64 when v is an integral number, exact past
// 2^53 for the integer kinds decoders give (1e3 from JSON is integral
// too).
func intValue(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case uint64:
		return int64(n), n <= math.MaxInt64
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
	}
	f, ok := numberValue(v)
	if !ok || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// numberValue is v as a float64 when v is a number as JSON or YAML decodes one.
func numberValue(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// stringMap is v as a map with string keys: YAML gives map[any]any when
// a key is not a string.
func stringMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, x := range m {
			s, ok := k.(string)
			if !ok {
				return nil, false
			}
			out[s] = x
		}
		return out, true
	}
	return nil, false
}

// describeValue says what a value that fits no type is, for E0612.
func describeValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case string:
		return "the string " + strconv.Quote(v)
	case []any:
		return "an array"
	case map[string]any, map[any]any:
		return "a map"
	}
	if f, ok := numberValue(v); ok {
		return "the number " + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprintf("%T", v)
}

// exampleValue is a value of the parameter type t, written as JSON.
func exampleValue(t *types.Type) string {
	switch t.Kind {
	case types.Bool:
		return "true"
	case types.Int:
		return "3"
	case types.Float:
		return "0.5"
	case types.Array:
		return "[" + exampleValue(t.Elem) + "]"
	case types.Map:
		return `{"k": ` + exampleValue(t.Elem) + "}"
	}
	return `"text"`
}
