package lsp

import (
	"testing"
	"unicode/utf8"
)

// Positions count UTF-16 code units on lines ended by \n, \r\n or \r.
func TestPositions(t *testing.T) {
	text := "a😀b\r\nxé\ry\n\nz"
	d := newDocument("u", 1, text)
	for _, tc := range []struct {
		off int
		pos Position
	}{
		{0, Position{0, 0}},
		{1, Position{0, 1}}, // the emoji
		{5, Position{0, 3}}, // b: the emoji is two units
		{6, Position{0, 4}}, // the \r
		{8, Position{1, 0}},
		{9, Position{1, 1}},  // é
		{11, Position{1, 2}}, // the \r
		{12, Position{2, 0}},
		{14, Position{3, 0}},
		{15, Position{4, 0}},
		{16, Position{4, 1}},
	} {
		if got := d.position(tc.off); got != tc.pos {
			t.Errorf("position(%d) = %v, want %v", tc.off, got, tc.pos)
		}
		if got := d.offset(tc.pos); got != tc.off && !(tc.off == 6 || tc.off == 11) {
			t.Errorf("offset(%v) = %d, want %d", tc.pos, got, tc.off)
		}
	}
	// Out of range: clamped to the line's end, the text's end, the
	// start; inside a surrogate pair, before its character.
	for _, tc := range []struct {
		pos Position
		off int
	}{
		{Position{0, 99}, 6},
		{Position{1, 99}, 11},
		{Position{99, 0}, len(text)},
		{Position{-1, 5}, 0},
		{Position{0, 2}, 1},
		{Position{0, -3}, 0},
	} {
		if got := d.offset(tc.pos); got != tc.off {
			t.Errorf("offset(%v) = %d, want %d", tc.pos, got, tc.off)
		}
	}
	// Every character boundary goes there and back.
	for off := 0; off <= len(text); off++ {
		if off < len(text) && !utf8.RuneStart(text[off]) || off > 0 && text[off-1] == '\r' && off < len(text) && text[off] == '\n' {
			continue
		}
		if got := d.offset(d.position(off)); got != off {
			t.Errorf("offset(position(%d)) = %d", off, got)
		}
	}
}

// An incremental change replaces its range; a whole-text change the text.
func TestApplyChange(t *testing.T) {
	d := newDocument("u", 1, "let x = \"😀\"\nset .a = x\n")
	d.apply(contentChange{Range: &Range{Position{1, 4}, Position{1, 6}}, Text: ".bb"})
	d.apply(contentChange{Range: &Range{Position{0, 9}, Position{0, 11}}, Text: "é"})
	if want := "let x = \"é\"\nset .bb = x\n"; d.text != want {
		t.Errorf("text %q, want %q", d.text, want)
	}
	d.apply(contentChange{Range: &Range{Position{1, 9}, Position{1, 0}}, Text: ""}) // reversed
	if want := "let x = \"é\"\n x\n"; d.text != want {
		t.Errorf("text %q, want %q", d.text, want)
	}
	d.apply(contentChange{Text: "new"})
	if d.text != "new" || len(d.lines) != 1 {
		t.Errorf("text %q lines %v", d.text, d.lines)
	}
}

func TestFilename(t *testing.T) {
	for uri, want := range map[string]string{
		"file:///home/a/b%20c.policy": "/home/a/b c.policy",
		"untitled:Untitled-1":         "untitled:Untitled-1",
		"%zz":                         "%zz",
	} {
		if got := (&document{uri: uri}).filename(); got != want {
			t.Errorf("filename(%q) = %q, want %q", uri, got, want)
		}
	}
}
