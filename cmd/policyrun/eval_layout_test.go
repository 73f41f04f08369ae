package main

import (
	"strings"
	"testing"
)

// A function whose format and zone are parameters, constant at each call
// (docs/language.md, Constants and functions): eval gives the same records
// on both backends, test passes its test block on each, and check reports
// a computed zone at the call.
func TestEvalLayoutParams(t *testing.T) {
	const src = `policy "layout"
schema {
  n: int
  k: string
  ...
}
fn stamp(n: int, tz: string, f: string) string {
  return format(f, format_time(from_unix(n), "%H:%M %Z", tz), n)
}
set .paris = stamp(.n, "Europe/Paris", "%s (%d)")
set .tokyo = stamp(.n, "Asia/Tokyo", "[%s] %x")

test "two zones, two formats" {
  input  {"n": 0, "k": "a"}
  expect {"n": 0, "k": "a", "paris": "01:00 CET (0)", "tokyo": "[09:00 JST] 0"}
}
`
	p := writePolicy(t, src)
	in := `{"n":0,"k":"a"}` + "\n" + `{"n":1782907200,"k":"b"}` + "\n"
	want := `{"n":0,"k":"a","paris":"01:00 CET (0)","tokyo":"[09:00 JST] 0"}` + "\n" +
		`{"n":1782907200,"k":"b","paris":"14:00 CEST (1782907200)","tokyo":"[21:00 JST] 6a450140"}` + "\n"
	for _, backend := range []string{"vm", "lua"} {
		code, out, errs := runWith(in, "eval", "--policy", p, "--backend", backend)
		if code != 0 || out != want {
			t.Errorf("eval --backend %s: exit %d, stdout\n%s\nwant\n%s\nstderr %s", backend, code, out, want, errs)
		}
		code, out, errs = runWith("", "test", "--backend", backend, p)
		if code != 0 || !strings.Contains(out, "1 passed, 0 failed") {
			t.Errorf("test --backend %s: exit %d: %s%s", backend, code, out, errs)
		}
	}
	bad := writePolicy(t, strings.Replace(src, `stamp(.n, "Asia/Tokyo"`, `stamp(.n, .k`, 1))
	code, out, errs := runWith("", "check", bad)
	if code != 1 || !strings.Contains(out+errs, "E0412") || !strings.Contains(out+errs, "argument tz of stamp must be a constant string") {
		t.Errorf("check of a computed zone: exit %d: %s%s", code, out, errs)
	}
}
