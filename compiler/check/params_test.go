package check

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/spec"
)

// TestParamExpr holds the conversion of given values to literals: a raw
// command-line value is the string itself for a string parameter and JSON
// for the rest; decoded values are taken as JSON and YAML decoders give
// them.
func TestParamExpr(t *testing.T) {
	strs, ints, floats := types.ArrayOf(types.StringType), types.MapOf(types.IntType), types.ArrayOf(types.FloatType)
	for _, tt := range []struct {
		v    spec.Param
		t    *types.Type
		want string // the literal's text, or the error
	}{
		{spec.Param{Value: "prod", Raw: true}, types.StringType, `"prod"`},
		{spec.Param{Value: `"prod"`, Raw: true}, types.StringType, `"\"prod\""`},
		{spec.Param{Value: "3", Raw: true}, types.IntType, "3"},
		{spec.Param{Value: "1e3", Raw: true}, types.IntType, "1000"},
		{spec.Param{Value: "9007199254740993", Raw: true}, types.IntType, "9007199254740993"},
		{spec.Param{Value: "3.5", Raw: true}, types.IntType, "error: the number 3.5"},
		{spec.Param{Value: "three", Raw: true}, types.IntType, `error: the string "three"`},
		{spec.Param{Value: "2", Raw: true}, types.FloatType, "2"},
		{spec.Param{Value: "true", Raw: true}, types.BoolType, "true"},
		{spec.Param{Value: "yes", Raw: true}, types.BoolType, `error: the string "yes"`},
		{spec.Param{Value: `["a", "b"]`, Raw: true}, strs, `["a", "b"]`},
		{spec.Param{Value: `["a", 1]`, Raw: true}, strs, "error: an array whose element 1 is the number 1"},
		{spec.Param{Value: `{"b": 2, "a": 1}`, Raw: true}, ints, `{"a": 1, "b": 2}`},
		{spec.Param{Value: map[string]any{"a": "x"}}, ints, `error: a map whose "a" is the string "x"`},
		{spec.Param{Value: map[any]any{"a": 1}}, ints, `{"a": 1}`},
		{spec.Param{Value: map[any]any{1: 1}}, ints, "error: a map"},
		{spec.Param{Value: []any{1, 2.5}}, floats, "[1, 2.5]"},
		{spec.Param{Value: []any{}}, strs, "[]"},
		{spec.Param{Value: json.Number("7")}, types.IntType, "7"},
		{spec.Param{Value: 9007199254740993}, types.IntType, "9007199254740993"},
		{spec.Param{Value: uint64(1) << 63}, types.IntType, "error: the number 9.223372036854776e+18"},
		{spec.Param{Value: 3.0}, types.IntType, "3"},
		{spec.Param{Value: nil}, types.StringType, "error: null"},
		{spec.Param{Value: 3}, types.StringType, "error: the number 3"},
	} {
		e, err := paramExpr(tt.v, tt.t, policy.Pos{})
		got := "error: " + err
		if err == "" {
			got = litText(e)
		}
		if got != tt.want {
			t.Errorf("%#v as %s: got %s, want %s", tt.v.Value, tt.t, got, tt.want)
		}
	}
}

// litText writes a literal in full (exprText shortens lists and maps).
func litText(e policy.Expr) string {
	switch e := e.(type) {
	case *policy.ListLit:
		var parts []string
		for _, x := range e.Elems {
			parts = append(parts, litText(x))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *policy.MapLit:
		var parts []string
		for _, en := range e.Entries {
			parts = append(parts, en.Key.Raw+": "+litText(en.Value))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case *policy.BasicLit:
		return e.Raw
	}
	return exprText(e)
}
