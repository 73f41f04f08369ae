package logparse

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// text is a Sink that writes what it gets as one line.
type text struct {
	b     strings.Builder
	inMap bool
}

func (t *text) sep() {
	if t.b.Len() > 0 && !strings.HasSuffix(t.b.String(), "{") {
		t.b.WriteByte(' ')
	}
}
func (t *text) Str(k, v string)       { t.sep(); fmt.Fprintf(&t.b, "%s=%q", k, v) }
func (t *text) Int(k string, v int64) { t.sep(); fmt.Fprintf(&t.b, "%s=%d", k, v) }
func (t *text) Time(k string, ns int64) {
	t.sep()
	fmt.Fprintf(&t.b, "%s=%s", k, time.Unix(0, ns).UTC().Format(time.RFC3339Nano))
}
func (t *text) BeginMap(k string) { t.sep(); fmt.Fprintf(&t.b, "%s={", k) }
func (t *text) EndMap()           { t.b.WriteByte('}') }

func TestCommonLog(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`127.0.0.1 bob frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326`,
			`host="127.0.0.1" identity="bob" user="frank" timestamp=2000-10-10T20:55:36Z message="GET /apache_pb.gif HTTP/1.0" method="GET" path="/apache_pb.gif" protocol="HTTP/1.0" status=200 size=2326`},
		{`::1 - - [01/Jan/2026:00:00:00 +0000] "-" 408 -`, `host="::1" timestamp=2026-01-01T00:00:00Z status=408`},
		{`h - - - "\x16\x03\x01" 400 0  `, `host="h" message="\\x16\\x03\\x01" status=400 size=0`},
		{`h - - [01/Jan/2026:00:00:00 +0000] "GET /a \"b\" HTTP/1.1" 200 5`, `host="h" timestamp=2026-01-01T00:00:00Z message="GET /a \\\"b\\\" HTTP/1.1" status=200 size=5`},
		{`h - - [01/Jan/2026:00:00:00 +0000] "GET / HTTP/1.1" 200 5 "ref" "agent"`, ""},
		{`h - - [32/Jan/2026:00:00:00 +0000] "GET / HTTP/1.1" 200 5`, ""},
		{`h - - [01/Jan/2026:00:00:00 +0000]"GET / HTTP/1.1" 200 5`, ""},
		{`h - - [01/Jan/2026:00:00:00 +0000] "GET / HTTP/1.1 200 5`, ""},
		{`h - - [01/Jan/2026:00:00:00 +0000] "GET / HTTP/1.1" 2x0 5`, ""},
		{`h - -`, ""},
		{``, ""},
	} {
		var out text
		ok := CommonLog(tc.in, &out)
		if got := out.b.String(); ok != (tc.want != "") || got != tc.want {
			t.Errorf("CommonLog(%q) = %v\n%s\nwant %s", tc.in, ok, got, tc.want)
		}
	}
}

var now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

func TestSyslog(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`<13>1 2020-03-13T20:45:38.119Z dynamicwireless.name non 2426 ID931 [exampleSDID@32473 iut="3" eventSource= "Application" eventID="1011"] Try to override`, ""},
		{`<13>1 2020-03-13T20:45:38.119Z dynamicwireless.name non 2426 ID931 [exampleSDID@32473 iut="3" eventSource="Appli\"cation" eventID="1011"][x a="]"] Try to override`,
			`facility="user" severity="notice" version=1 timestamp=2020-03-13T20:45:38.119Z hostname="dynamicwireless.name" appname="non" procid=2426 msgid="ID931" exampleSDID@32473={iut="3" eventSource="Appli\"cation" eventID="1011"} x={a="]"} message="Try to override"`},
		{`<165>1 2003-10-11T22:14:15.003+02:00 mymachine.example.com evntslog - ID47 - ` + "\uFEFF" + `An application event`,
			`facility="local4" severity="notice" version=1 timestamp=2003-10-11T20:14:15.003Z hostname="mymachine.example.com" appname="evntslog" msgid="ID47" message="An application event"`},
		{`<34>1 - - - - - -`, `facility="auth" severity="crit" version=1 message=""`},
		{`<34>Oct 11 22:14:15 mymachine su: 'su root' failed`, `facility="auth" severity="crit" timestamp=2025-10-11T22:14:15Z hostname="mymachine" appname="su" message="'su root' failed"`},
		{`<13>Feb  5 17:32:18 10.0.0.99 sshd[1234]: Accepted`, `facility="user" severity="notice" timestamp=2025-02-05T17:32:18Z hostname="10.0.0.99" appname="sshd" procid=1234 message="Accepted"`},
		{`<13>Jan 1 00:00:00 app[x1]: hi`, `facility="user" severity="notice" timestamp=2026-01-01T00:00:00Z appname="app" procid="x1" message="hi"`},
		{`Dec 31 23:59:59 host plain message`, `timestamp=2025-12-31T23:59:59Z hostname="host" message="plain message"`},
		{`<0>2026-01-01T00:00:00Z host app: x`, `facility="kern" severity="emerg" timestamp=2026-01-01T00:00:00Z hostname="host" appname="app" message="x"`},
		{`<192>1 - - - - - -`, ""},
		{`<013>1 - - - - - -`, ""},
		{`<13>1 2020-13-13T20:45:38Z h a p m -`, ""},
		{`<13>1 - h a p m [x a="b"`, ""},
		{`<13>1 - h a p m -x`, ""},
		{`<13>`, ""},
		{`just text`, ""},
		{``, ""},
	} {
		var out text
		_, ok := Syslog(tc.in, now, &out, nil)
		if got := out.b.String(); ok != (tc.want != "") || got != tc.want {
			t.Errorf("Syslog(%q) = %v\n%s\nwant %s", tc.in, ok, got, tc.want)
		}
	}
}

func FuzzSyslog(f *testing.F) {
	for _, s := range []string{`<13>1 2020-03-13T20:45:38.119Z h a 1 m [x a="\"b"] m`, `<34>Oct 11 22:14:15 h su: x`, `<1>`, `Jan  1 00:00:00 a[1]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var out text
		Syslog(s, now, &out, nil)
	})
}

func FuzzCommonLog(f *testing.F) {
	for _, s := range []string{`127.0.0.1 bob frank [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 2326`, `h - - - "-" - -`, `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var out text
		CommonLog(s, &out)
	})
}
