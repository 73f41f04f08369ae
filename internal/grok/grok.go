// Package grok expands grok patterns (%{NAME} and %{NAME:field} over the
// built-in library of Patterns) to RE2, for parse_grok, whose pattern the
// checker expands and compiles once; and gives the fields of a match, the
// one extraction behind the VM's and the Lua backend's.
package grok

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/policyrun/policyrun/internal/suggest"
)

// Error is a pattern that does not expand: Offset and Len locate the part
// of the pattern at fault.
type Error struct {
	Offset, Len int
	Msg, Hint   string
}

func (e *Error) Error() string { return e.Msg }

// Compile expands pattern and compiles it.
func Compile(pattern string) (*regexp.Regexp, *Error) {
	src, err := Expand(pattern)
	if err != nil {
		return nil, err
	}
	re, cerr := regexp.Compile(src)
	if cerr != nil {
		e := &Error{Offset: 0, Len: len(pattern), Msg: "the pattern is not RE2: " + strings.TrimPrefix(cerr.Error(), "error parsing regexp: ")}
		if s := unsupported(pattern); s != "" {
			e.Hint = s
		} else {
			e.Hint = "grok patterns are RE2 regular expressions with %{NAME} and %{NAME:field}"
		}
		return nil, e
	}
	return re, nil
}

// unsupported names the Oniguruma syntax in p that RE2 does not have.
func unsupported(p string) string {
	for _, f := range []struct{ syntax, name string }{
		{"(?=", "lookahead"}, {"(?!", "negative lookahead"}, {"(?<=", "lookbehind"}, {"(?<!", "negative lookbehind"},
		{"(?>", "atomic groups"}, {"++", "possessive quantifiers"}, {"*+", "possessive quantifiers"}, {"?+", "possessive quantifiers"},
		{`\k<`, "named backreferences"}, {`\1`, "backreferences"}, {`\2`, "backreferences"},
	} {
		if strings.Contains(p, f.syntax) {
			return fmt.Sprintf("RE2 has no %s (%s); match without it, or with a second parse_grok or matches", f.name, f.syntax)
		}
	}
	return ""
}

// Expand returns the RE2 source of pattern: %{NAME} becomes (?:…) of the
// library's NAME expanded in turn, %{NAME:field} the group (?P<field>…).
func Expand(pattern string) (string, *Error) {
	var b strings.Builder
	if err := expand(&b, pattern, 0, nil, nil); err != nil {
		return "", err
	}
	return b.String(), nil
}

// span is where in the user's pattern an error is reported.
type span struct{ at, n int }

// expand writes p, which starts at offset base of the user's pattern. top
// is the user's %{…} being expanded (nil at the user's level): errors in a
// library pattern are reported there. stack holds the names being
// expanded.
func expand(b *strings.Builder, p string, base int, top *span, stack []string) *Error {
	for {
		i := strings.Index(p, "%{")
		if i < 0 {
			b.WriteString(p)
			return nil
		}
		b.WriteString(p[:i])
		j := strings.IndexByte(p[i:], '}')
		here := span{base + i, j + 1}
		if top != nil {
			here = *top
		}
		if j < 0 {
			return &Error{Offset: here.at, Len: len(p) - i, Msg: "%{ without a closing }", Hint: "write %{NAME} or %{NAME:field}"}
		}
		ref := p[i+2 : i+j]
		name, field, hasField := strings.Cut(ref, ":")
		def, ok := Patterns[name]
		if !ok {
			e := &Error{Offset: here.at, Len: here.n, Msg: fmt.Sprintf("unknown grok pattern %s", name)}
			if s := suggest.Closest(name, Names()); s != "" {
				e.Hint = fmt.Sprintf("did you mean %%{%s}? The reference lists the library", s)
			} else {
				e.Hint = "the reference lists the library; write the regular expression itself for anything else"
			}
			return e
		}
		for _, s := range stack {
			if s == name {
				return &Error{Offset: here.at, Len: here.n, Msg: fmt.Sprintf("grok pattern %s refers to itself", name)}
			}
		}
		if hasField {
			f, typ, hasType := strings.Cut(field, ":")
			if hasType {
				return &Error{Offset: here.at, Len: here.n, Msg: fmt.Sprintf("%%{%s} converts to %s, and parse_grok gives strings", ref, typ),
					Hint: fmt.Sprintf("write %%{%s:%s} and convert the field: to_int(m[%q]), to_float(…)", name, f, f)}
			}
			if !fieldName(f) {
				return &Error{Offset: here.at, Len: here.n, Msg: fmt.Sprintf("field name %q is not a plain name", f),
					Hint: "field names are letters, digits and _ (no nested [a][b] or a.b): write %{" + name + ":a_b} and move it with rename"}
			}
			b.WriteString("(?P<" + f + ">")
		} else {
			b.WriteString("(?:")
		}
		if err := expand(b, def, 0, &here, append(stack, name)); err != nil {
			return err
		}
		b.WriteByte(')')
		p, base = p[i+j+1:], base+i+j+1
	}
}

func fieldName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// Names lists the library's patterns, sorted.
func Names() []string {
	out := make([]string, 0, len(Patterns))
	for n := range Patterns {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Fields calls f once for each name of re's named groups, in the order
// the pattern first gives each name, with the text of the first group of
// that name that took part in the match loc (re.FindStringSubmatchIndex(s)).
// A name none of whose groups took part is left out, or, with all, given
// "": capture has every name of its pattern, parse_grok only the fields it
// matched. A name may stand on several groups (alternatives); the one that
// matched gives the value, wherever it stands.
func Fields(re *regexp.Regexp, s string, loc []int, all bool, f func(name, value string)) {
	names := re.SubexpNames()
next:
	for i := 1; i < len(names); i++ {
		name := names[i]
		if name == "" {
			continue
		}
		for k := 1; k < i; k++ {
			if names[k] == name {
				continue next // given at its first group
			}
		}
		for j := i; j < len(names); j++ {
			if names[j] == name && loc[2*j] >= 0 {
				f(name, s[loc[2*j]:loc[2*j+1]])
				continue next
			}
		}
		if all {
			f(name, "")
		}
	}
}
