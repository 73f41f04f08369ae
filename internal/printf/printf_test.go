package printf

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestLikeGo holds every directive to what Go's fmt writes for it.
func TestLikeGo(t *testing.T) {
	ints := []int64{0, 1, -1, 42, -42, 255, math.MaxInt64, math.MinInt64}
	floats := []float64{0, math.Copysign(0, -1), 1.5, -1.5, 2.675, 1e21, -1e-7, 123456.789, math.MaxFloat64}
	strs := []string{"", "a", "héllo", "日本語", "tab\there", "quote\"", "\x00\xff"}
	flags := []string{"", "-", "0", "+", " ", "-0", "+0", "- ", "+-"}
	widths := []string{"", "1", "5", "12"}
	for _, fl := range flags {
		for _, w := range widths {
			for _, verb := range "dxfsqv" {
				for _, p := range []string{"", ".0", ".2", "."} {
					format := "%" + fl + w + p + string(verb)
					_, v, _, err := Next(format, 0)
					if err != nil {
						continue
					}
					switch verb {
					case 'd':
						for _, x := range ints {
							check(t, format, string(AppendInt(nil, &v, x)), x)
						}
					case 'x':
						for _, x := range ints {
							check(t, format, string(AppendInt(nil, &v, x)), x)
						}
						for _, s := range strs {
							check(t, format, string(AppendHex(nil, &v, s)), s)
						}
					case 'f':
						for _, x := range floats {
							check(t, format, string(AppendFloat(nil, &v, x)), x)
						}
					case 's', 'v':
						for _, s := range strs {
							check(t, format, string(AppendString(nil, &v, s)), s)
						}
					case 'q':
						for _, s := range strs {
							check(t, format, string(AppendQuote(nil, &v, s)), s)
						}
					}
				}
			}
		}
	}
}

func check(t *testing.T, format, got string, x any) {
	t.Helper()
	if want := fmt.Sprintf(format, x); got != want {
		t.Errorf("%s of %#v: %q, want %q", format, x, got, want)
	}
}

func TestVerbs(t *testing.T) {
	vs, err := Verbs("a %s b %% %-5d %08.3f %v%q%x")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, fmt.Sprintf("%c@%d-%d", v.Verb, v.Start, v.End))
	}
	if want := "s@2-4 d@10-14 f@15-21 v@22-24 q@24-26 x@26-28"; strings.Join(got, " ") != want {
		t.Errorf("got %s, want %s", strings.Join(got, " "), want)
	}
	for _, bad := range []struct{ format, msg string }{
		{"100%", "ends inside"},
		{"%y", "%y is not a verb"},
		{"%é", "%é is not a verb"},
		{"%.2d", "precision"},
		{"%05s", "0 flag"},
		{"%+x", "+ and space"},
		{"%5%", "%% takes no"},
		{"%1001d", "at most"},
		{"%.99999999999999999999f", "at most"},
	} {
		_, err := Verbs(bad.format)
		if err == nil || !strings.Contains(err.Msg, bad.msg) {
			t.Errorf("%q: err = %v, want %q", bad.format, err, bad.msg)
		}
	}
}

// TestAppend: the literal text and %% are written as they are, each
// verb by arg with its argument's number, and the text stops once it is
// past max.
func TestAppend(t *testing.T) {
	arg := func(dst []byte, v Verb, n int) []byte {
		return AppendString(dst, &v, fmt.Sprintf("<%c%d>", v.Verb, n))
	}
	for _, tt := range []struct {
		format string
		max    int
		want   string
		ok     bool
	}{
		{"", 10, "", true},
		{"plain", 10, "plain", true},
		{"a %s b %d%%c %5v", 100, "a <s0> b <d1>%c  <v2>", true},
		{"%s%s%s", 8, "<s0><s1><s2>", false},
		{"%s%s%s", 12, "<s0><s1><s2>", true},
		{"12345%%", 5, "12345%", false},
	} {
		got, ok := Append([]byte("x:"), tt.format, tt.max+2, arg)
		if string(got) != "x:"+tt.want || ok != tt.ok {
			t.Errorf("Append(%q, %d) = %q, %v; want %q, %v", tt.format, tt.max, got, ok, "x:"+tt.want, tt.ok)
		}
	}
}
