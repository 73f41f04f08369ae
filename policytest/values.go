package policytest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
)

// Records are compared as JSON values (semantics.md): maps without regard
// to key order, ints (int64) and floats (float64) as distinct kinds, and
// timestamps as RFC 3339 strings.

// LitValue converts a constant JSON literal of a test block to Go values:
// nil, bool, int64, float64, string, []any and map[string]any.
func LitValue(e policy.Expr) (any, error) {
	switch e := e.(type) {
	case *policy.ParenExpr:
		return LitValue(e.X)
	case *policy.BasicLit:
		switch e.Kind {
		case policy.LitNull:
			return nil, nil
		case policy.LitBool:
			return e.Bool, nil
		case policy.LitInt:
			return e.Int, nil
		case policy.LitFloat:
			return e.Float, nil
		case policy.LitString:
			return e.Str, nil
		}
	case *policy.UnaryExpr:
		if e.Op == policy.SUB {
			v, err := LitValue(e.X)
			switch v := v.(type) {
			case int64:
				return -v, err
			case float64:
				return -v, err
			}
		}
	case *policy.ListLit:
		out := make([]any, 0, len(e.Elems))
		for _, x := range e.Elems {
			v, err := LitValue(x)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *policy.MapLit:
		out := make(map[string]any, len(e.Entries))
		for _, ent := range e.Entries {
			v, err := LitValue(ent.Value)
			if err != nil {
				return nil, err
			}
			out[ent.Key.Str] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a constant JSON value at %s", e.Pos())
}

// appendLitJSON writes a constant literal as JSON, keeping the key order of
// map literals (which a Go map would lose).
func appendLitJSON(dst []byte, e policy.Expr) ([]byte, error) {
	switch e := e.(type) {
	case *policy.ListLit:
		dst = append(dst, '[')
		for i, x := range e.Elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendLitJSON(dst, x); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case *policy.MapLit:
		dst = append(dst, '{')
		for i, ent := range e.Entries {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendQuote(dst, ent.Key.Str)
			dst = append(dst, ':')
			var err error
			if dst, err = appendLitJSON(dst, ent.Value); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	v, err := LitValue(e)
	if err != nil {
		return nil, err
	}
	return appendScalar(dst, v), nil
}

func appendScalar(dst []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, v)
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case float64:
		return record.AppendFloat(dst, v)
	case string:
		b, _ := json.Marshal(v)
		return append(dst, b...)
	}
	return append(dst, "null"...)
}

// Value is the record r as the JSON values tests compare (Equal, Diff):
// what r.ToGo returns, its timestamps as RFC 3339 strings and its bytes as
// strings.
func Value(r *record.Record) any { return normalize(r.ToGo()) }

func normalize(v any) any {
	switch v := v.(type) {
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	case []byte:
		return string(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = normalize(x)
		}
		return out
	}
	return v
}

// Equal reports whether two JSON values are equal: same kinds (an int is
// never equal to a float), maps in any key order, arrays in order.
func Equal(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, x := range a {
			y, ok := b[k]
			if !ok || !Equal(x, y) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !Equal(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// JSON writes v as compact JSON with sorted keys and floats that stay
// floats (2.0), for messages.
func JSON(v any) string { return string(appendJSON(nil, v)) }

func appendJSON(dst []byte, v any) []byte {
	switch v := v.(type) {
	case []any:
		dst = append(dst, '[')
		for i, x := range v {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendJSON(dst, x)
		}
		return append(dst, ']')
	case map[string]any:
		dst = append(dst, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendScalar(dst, k)
			dst = append(dst, ": "...)
			dst = appendJSON(dst, v[k])
		}
		return append(dst, '}')
	}
	return appendScalar(dst, v)
}

// Diff explains how got differs from want, one line per difference, each
// with the path where it is, followed by both records in full.
func Diff(want, got any) string {
	var lines []string
	diff(&lines, "", want, got)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString("    want: " + JSON(want) + "\n")
	b.WriteString("    got:  " + JSON(got))
	return b.String()
}

func describe(v any) string {
	kind := "null"
	switch v.(type) {
	case bool:
		kind = "bool"
	case int64:
		kind = "int"
	case float64:
		kind = "float"
	case string:
		kind = "string"
	case []any:
		kind = "array"
	case map[string]any:
		kind = "map"
	}
	return JSON(v) + " (" + kind + ")"
}

func diff(lines *[]string, at string, want, got any) {
	where := at
	if where == "" {
		where = "."
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			p := at + "." + pathKey(k)
			if gv, ok := g[k]; ok {
				diff(lines, p, w[k], gv)
			} else {
				*lines = append(*lines, fmt.Sprintf("%s: missing, want %s", p, describe(w[k])))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(g)) {
			if _, ok := w[k]; !ok {
				*lines = append(*lines, fmt.Sprintf("%s: unexpected %s", at+"."+pathKey(k), describe(g[k])))
			}
		}
		return
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			break
		}
		for i := range w {
			diff(lines, fmt.Sprintf("%s[%d]", at, i), w[i], g[i])
		}
		return
	}
	if !Equal(want, got) {
		*lines = append(*lines, fmt.Sprintf("%s: want %s, got %s", where, describe(want), describe(got)))
	}
}

func pathKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return strconv.Quote(k)
		}
	}
	return k
}
