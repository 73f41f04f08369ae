package kvtext

import (
	"fmt"
	"strings"
	"testing"
)

func scanLogfmt(s string) string {
	var sc Logfmt
	sc.Init(s)
	var out []string
	for sc.Next() {
		out = append(out, fmt.Sprintf("%s=%q", sc.Key(), sc.AppendValue(nil)))
	}
	if sc.Err() != nil {
		return "error: " + sc.Err().Error()
	}
	return strings.Join(out, " ")
}

func TestLogfmt(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{``, ``},
		{`   `, ``},
		{`a=1 b=two`, `a="1" b="two"`},
		{"a=1\tb=2\r\nc=3", `a="1" b="2" c="3"`},
		{`msg="hello \"there\" \\ \n" x=y`, `msg="hello \"there\" \\ \\n" x="y"`},
		{`bare other=`, `bare="" other=""`},
		{`k=v=w`, `k="v=w"`},
		{`a=1 a=2`, `a="1" a="2"`},
		{`msg="open`, `error: unterminated quoted value`},
		{`=x`, `error: empty key`},
		{`ok=1 =x`, `error: empty key`},
	} {
		if got := scanLogfmt(tt.in); got != tt.want {
			t.Errorf("logfmt %q = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func scanPairs(s, ps, kvs string) string {
	var sc Pairs
	sc.Init(s, ps, kvs)
	var out []string
	for sc.Next() {
		out = append(out, fmt.Sprintf("%q:%q", sc.Key(), sc.Value()))
	}
	if sc.Err() != nil {
		return "error: " + sc.Err().Error()
	}
	return strings.Join(out, " ")
}

func TestPairs(t *testing.T) {
	for _, tt := range []struct{ in, ps, kvs, want string }{
		{``, `,`, `=`, ``},
		{`a=1, b = 2 ,,  ,c=`, `,`, `=`, `"a":"1" "b":"2" "c":""`},
		{`a:1;b:x:y`, `;`, `:`, `"a":"1" "b":"x:y"`},
		{`a=1,b`, `,`, `=`, `error: a pair without its separator`},
		{` =1`, `,`, `=`, `error: empty key`},
		{`a=1`, ``, `=`, `error: a pair without its separator`},
		{`a=1`, `,`, ``, `error: a pair without its separator`},
	} {
		if got := scanPairs(tt.in, tt.ps, tt.kvs); got != tt.want {
			t.Errorf("pairs %q = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestIsDecimal(t *testing.T) {
	for s, want := range map[string]bool{
		"1": true, "-1.5": true, "+.5": true, "1e3": true, "1.E-3": true, "5.": true,
		"": false, ".": false, "1e": false, "1_0": false, "0x10": false, "inf": false, "NaN": false, " 1": false,
	} {
		if IsDecimal(s) != want {
			t.Errorf("IsDecimal(%q) = %v", s, !want)
		}
	}
}

func TestScansDoNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() {
		var sc Logfmt
		sc.Init(`a=1 msg="x \"y\"" bare`)
		for sc.Next() {
			buf = sc.AppendValue(buf[:0])
		}
		var p Pairs
		p.Init("a=1, b=2", ",", "=")
		for p.Next() {
		}
	}); n != 0 {
		t.Errorf("%v allocations per scan", n)
	}
}

// FuzzLogfmt: no panic, and a successful scan's pairs, written back with
// their values quoted, scan to the same pairs.
func FuzzLogfmt(f *testing.F) {
	for _, s := range []string{`a=1 b="x y" c`, `msg="\"q\" \\"`, `=`, `a="`, "a=1\tb=\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var sc Logfmt
		sc.Init(s)
		var b strings.Builder
		var first []string
		for sc.Next() {
			v := string(sc.AppendValue(nil))
			first = append(first, sc.Key()+"\x00"+v)
			b.WriteString(sc.Key() + `="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `" `)
		}
		if sc.Err() != nil {
			return
		}
		sc.Init(b.String())
		i := 0
		for sc.Next() {
			if i >= len(first) || first[i] != sc.Key()+"\x00"+string(sc.AppendValue(nil)) {
				t.Fatalf("round trip of %q differs at pair %d", s, i)
			}
			i++
		}
		if sc.Err() != nil || i != len(first) {
			t.Fatalf("round trip of %q: %d pairs of %d, err %v", s, i, len(first), sc.Err())
		}
	})
}
