package types

import (
	"fmt"
	"strings"
)

// Parse reads a type as String writes it, for the scalar, array, map,
// optional and closed object types that built-in signatures use: "string",
// "map<string>?", "array<any>", "{host: string, port: int?}" (a result
// of parse_url). Open objects ("...") are not accepted: no signature names
// one.
func Parse(s string) (*Type, error) {
	t, rest, err := parse(s)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, fmt.Errorf("type %q: unexpected %q", s, rest)
	}
	return t, nil
}

func parse(s string) (*Type, string, error) {
	var t *Type
	switch {
	case strings.HasPrefix(s, "{"):
		obj, rest, err := parseObject(s)
		if err != nil {
			return nil, "", err
		}
		t, s = obj, rest
	case strings.HasPrefix(s, "array<"), strings.HasPrefix(s, "map<"):
		open := strings.IndexByte(s, '<')
		elem, rest, err := parse(s[open+1:])
		if err != nil {
			return nil, "", err
		}
		if !strings.HasPrefix(rest, ">") {
			return nil, "", fmt.Errorf("type %q: missing >", s)
		}
		if s[:open] == "array" {
			t = ArrayOf(elem)
		} else {
			t = MapOf(elem)
		}
		s = rest[1:]
	default:
		n := 0
		for n < len(s) && ('a' <= s[n] && s[n] <= 'z') {
			n++
		}
		t = Basic(s[:n])
		if t == nil {
			return nil, "", fmt.Errorf("type %q: unknown name %q", s, s[:n])
		}
		s = s[n:]
	}
	if strings.HasPrefix(s, "?") {
		t, s = OptionalOf(t), s[1:]
	}
	return t, s, nil
}

// parseObject reads "{name: type, ...}" at the start of s.
func parseObject(s string) (*Type, string, error) {
	rest := s[1:]
	var fields []Field
	for i := 0; !strings.HasPrefix(rest, "}"); i++ {
		if i > 0 {
			if !strings.HasPrefix(rest, ", ") {
				return nil, "", fmt.Errorf("type %q: want , or }", s)
			}
			rest = rest[2:]
		}
		name, after, ok := strings.Cut(rest, ": ")
		if !ok || !isIdent(name) {
			return nil, "", fmt.Errorf("type %q: want a field name and :", s)
		}
		for _, f := range fields {
			if f.Name == name {
				return nil, "", fmt.Errorf("type %q: field %s twice", s, name)
			}
		}
		ft, r, err := parse(after)
		if err != nil {
			return nil, "", err
		}
		fields = append(fields, Field{Name: name, Type: ft})
		rest = r
	}
	return ObjectOf(false, fields...), rest[1:], nil
}
