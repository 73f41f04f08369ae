package exprbaseline

import (
	"encoding/json"
	"fmt"
	"regexp"

	exprlang "github.com/expr-lang/expr"

	"github.com/policyrun/policyrun/internal/grok"
	"github.com/policyrun/policyrun/internal/logparse"
)

// The baseline of conformance/policies/builtins-15.policy (issue 15's
// benchmark): parse_syslog, parse_grok, format and a merge into the root,
// as a Go program on expr would do them: Go functions registered with
// expr, over a map[string]any.

// AccessGrok is the grok pattern of the benchmark's access-log field.
const AccessGrok = `%{IPORHOST:client} %{USER:ident} %{USER:auth} \[%{HTTPDATE:ts}\] "%{WORD:method} %{NOTSPACE:path} HTTP/%{NUMBER:httpversion}" %{NUMBER:code} %{NUMBER:size}`

// goSink collects a parsed line into a Go map.
type goSink struct {
	m   map[string]any
	sub map[string]any
	key string
}

func (s *goSink) put(k string, v any) {
	if s.sub != nil {
		s.sub[k] = v
		return
	}
	s.m[k] = v
}
func (s *goSink) Str(k, v string)         { s.put(k, v) }
func (s *goSink) Int(k string, v int64)   { s.put(k, float64(v)) }
func (s *goSink) Time(k string, ns int64) { s.put(k, float64(ns)) }
func (s *goSink) BeginMap(k string)       { s.sub, s.key = map[string]any{}, k }
func (s *goSink) EndMap()                 { s.m[s.key], s.sub = s.sub, nil }

// Builtins15 returns the baseline, compiled.
func Builtins15() (*Baseline, error) {
	re, gerr := grok.Compile(AccessGrok)
	if gerr != nil {
		return nil, fmt.Errorf("grok: %v", gerr)
	}
	fns := []exprlang.Option{
		exprlang.Function("parseSyslog", func(p ...any) (any, error) {
			s := &goSink{m: map[string]any{}}
			if _, ok := logparse.Syslog(p[0].(string), 0, s, nil); !ok {
				return map[string]any{}, nil
			}
			return s.m, nil
		}, new(func(string) map[string]any)),
		exprlang.Function("grok", func(p ...any) (any, error) {
			return grokFields(re, p[0].(string)), nil
		}, new(func(string) map[string]any)),
		exprlang.Function("format", func(p ...any) (any, error) {
			return fmt.Sprintf(p[0].(string), p[1:]...), nil
		}),
		exprlang.Function("parseJSONMap", func(p ...any) (any, error) {
			var m map[string]any
			if json.Unmarshal([]byte(p[0].(string)), &m) != nil || m == nil {
				return map[string]any{}, nil
			}
			return m, nil
		}, new(func(string) map[string]any)),
	}
	env := map[string]any{
		"syslog": "", "access": "", "user": "", "status": 0.0, "extra": "",
		"_s": map[string]any{}, "_g": map[string]any{},
	}
	b := &Baseline{Name: "builtins-15", Kind: "builtins", Ops: []Op{
		{Kind: Set, Path: "_s", Expr: `parseSyslog(syslog)`},
		{Kind: Set, Path: "_g", Expr: `grok(access)`},
		{Kind: Set, Path: "app", Expr: `_s.appname ?? "unknown"`},
		{Kind: Set, Path: "severity", Expr: `_s.severity ?? "none"`},
		{Kind: Set, Path: "method", Expr: `_g.method ?? "-"`},
		{Kind: Set, Path: "summary", Expr: `format("%s %s %s -> %d", user, _g.method ?? "-", _g.path ?? "-", int(status))`},
		{Kind: MergeRoot, Expr: `parseJSONMap(extra)`},
		{Kind: Remove, Path: "extra"},
		{Kind: Remove, Path: "_s"},
		{Kind: Remove, Path: "_g"},
	}}
	if err := compileWith(b.Ops, env, fns); err != nil {
		return nil, err
	}
	return b, nil
}

func grokFields(re *regexp.Regexp, s string) map[string]any {
	m := map[string]any{}
	loc := re.FindStringSubmatchIndex(s)
	if loc == nil {
		return m
	}
	grok.Fields(re, s, loc, false, func(name, value string) { m[name] = value })
	return m
}
