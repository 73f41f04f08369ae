package policy

import (
	"fmt"
	"strconv"
	"strings"
)

// Pos is a position in a source file. Line and Col count from 1; Col counts
// bytes, as go/token does. The zero Pos is invalid ("no position").
type Pos struct {
	Offset int // byte offset from the start of the file
	Line   int
	Col    int
}

// IsValid reports whether p is a real position.
func (p Pos) IsValid() bool { return p.Line > 0 }

func (p Pos) String() string {
	if !p.IsValid() {
		return "-"
	}
	return fmt.Sprintf("%d:%d", p.Line, p.Col)
}

// Advance returns the position just past text when text starts at p. It
// follows newlines, so it is right for multi-line raw strings too.
func (p Pos) Advance(text string) Pos {
	if !p.IsValid() {
		return p
	}
	p.Offset += len(text)
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		p.Line += strings.Count(text, "\n")
		p.Col = len(text) - i
		return p
	}
	p.Col += len(text)
	return p
}

// Before reports whether p comes before q in the same file.
func (p Pos) Before(q Pos) bool { return p.Offset < q.Offset }

// Quote writes s as a policy string literal, escaping what the lexer unescapes.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f || r == 0xFFFD {
				b.WriteString(`\u{` + strconv.FormatInt(int64(r), 16) + `}`)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
