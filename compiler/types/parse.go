package types

import (
	"fmt"
	"strings"
)

// Parse reads a type as String writes it, for the scalar, array, map and
// optional types that built-in signatures use: "string", "map<string>?",
// "array<any>". Object types are not accepted: signatures never name one.
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
