package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/record"
)

const evalPolicy = `policy "e"
schema {
  n: int
  ...
}
drop when .n < 0
set .half = 10 / .n
`

func TestEval(t *testing.T) {
	p := writePolicy(t, evalPolicy)
	in := `{"n":2}` + "\n" + `{"n":-1}` + "\n" + `{"n":0}` + "\n" + `[1]` + "\n" + `{"n":5,"s":"x"}` + "\n"
	for _, backend := range []string{"vm", "lua"} {
		code, out, errs := runWith(in, "eval", "--policy", p, "--backend", backend)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", backend, code, errs)
		}
		want := `{"n":2,"half":5}` + "\n" + `{"n":0}` + "\n" + `[1]` + "\n" + `{"n":5,"s":"x","half":2}` + "\n"
		if out != want {
			t.Errorf("%s: stdout\n%s\nwant\n%s", backend, out, want)
		}
		for _, s := range []string{"line 4:", "eval: 5 in, 4 out, 1 dropped, 1 faulted (division_by_zero 1), 1 malformed passed through"} {
			if !strings.Contains(errs, s) {
				t.Errorf("%s: stderr lacks %q:\n%s", backend, s, errs)
			}
		}
	}
}

func TestEvalMsgpack(t *testing.T) {
	p := writePolicy(t, evalPolicy)
	code, packed, errs := runWith(`{"n":2}`+"\n"+`{"n":-3}`+"\n", "eval", "--policy", p, "--out", "msgpack")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, out, errs := runWith(packed, "eval", "--policy", p, "--in", "msgpack")
	if code != 0 || out != `{"n":2,"half":5}`+"\n" {
		t.Errorf("exit %d, stdout %q, stderr %s", code, out, errs)
	}
}

// Events in every array and map header Fluent Bit writes go through the
// policy; a value that does not decode but whose extent is known is passed
// through and the next one is read; one whose extent is unknown takes the
// rest of the input with it.
func TestEvalMsgpackHeaders(t *testing.T) {
	p := writePolicy(t, evalPolicy)
	ev := func(hdr []byte, n byte) []byte { // [1, {"n": n}] with header hdr
		return append(append([]byte(nil), hdr...), 0x01, 0xde, 0, 1, 0xa1, 'n', n)
	}
	fix, a16, a32 := []byte{0x92}, []byte{0xdc, 0, 2}, []byte{0xdd, 0, 0, 0, 2}
	notEvent := []byte{0xdc, 0, 3, 1, 2, 3}        // an array of 3
	badKey := []byte{0xdf, 0, 0, 0, 1, 0x01, 0x02} // {1: 2}
	in := bytes.Join([][]byte{
		ev(fix, 2), ev(a16, 0xff), ev(a32, 5), notEvent,
		append([]byte{0xdd, 0, 0, 0, 2, 0xdc, 0, 2, 0x01, 0x80}, 0xdf, 0, 0, 0, 1, 0xa1, 'n', 10), // v2
		badKey, ev(a16, 1),
	}, nil)
	code, out, errs := runWith(string(in), "eval", "--policy", p, "--in", "msgpack", "--out", "msgpack")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got []string
	a := record.NewArena()
	for b := []byte(out); len(b) > 0; {
		r, n, err := a.DecodeMsgpack(b, record.Owned)
		if err != nil {
			skip, _ := record.MsgpackLen(b)
			got = append(got, fmt.Sprintf("raw %x", b[:skip]))
			b = b[skip:]
			continue
		}
		got = append(got, string(r.AppendJSON(nil)))
		b = b[n:]
	}
	want := []string{`{"n":2,"half":5}`, `{"n":5,"half":2}`, fmt.Sprintf("raw %x", notEvent),
		`{"n":10,"half":1}`, fmt.Sprintf("raw %x", badKey), `{"n":1,"half":10}`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records\n%q\nwant\n%q", got, want)
	}
	for _, s := range []string{"record 4:", "record 6:", "its 6 bytes passed through", "its 7 bytes passed through",
		"eval: 7 in, 6 out, 1 dropped, 0 faulted, 2 malformed passed through"} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errs)
		}
	}
	// A value cut short has no known end: the rest goes through as it is.
	code, out, errs = runWith(string(append(ev(a16, 2), 0xdc, 0, 2, 0x01, 0xde, 0, 9)), "eval", "--policy", p, "--in", "msgpack", "--out", "msgpack")
	if code != 0 || !strings.HasSuffix(out, "\xdc\x00\x02\x01\xde\x00\x09") ||
		!strings.Contains(errs, "record 2:") || !strings.Contains(errs, "the rest of the input is passed through unchanged") {
		t.Errorf("exit %d, stdout %q, stderr %s", code, out, errs)
	}
}

func TestEvalUsage(t *testing.T) {
	p := writePolicy(t, evalPolicy)
	bad := writePolicy(t, "policy \"b\"\nschema {\n s: int\n}\ndrop when .s == \"1\"\n")
	tests := []struct {
		args []string
		code int
		msg  string // in stderr, when set
	}{
		{[]string{"eval"}, 2, ""},
		{[]string{"eval", "--policy", p, "--in", "xml"}, 2, ""},
		{[]string{"eval", "--policy", p, "--backend", "nope"}, 2, `unknown backend "nope"`},
		{[]string{"eval", "--policy", p, "--backend", "all"}, 2, "eval runs one backend"},
		{[]string{"eval", "--policy", "/does/not/exist"}, 2, ""},
		{[]string{"eval", "--policy", bad}, 1, ""},
	}
	for _, tt := range tests {
		code, _, errs := runWith("", tt.args...)
		if code != tt.code {
			t.Errorf("%v: exit %d, want %d: %s", tt.args, code, tt.code, errs)
		}
		if !strings.Contains(errs, tt.msg) {
			t.Errorf("%v: stderr %q, want %q in it", tt.args, errs, tt.msg)
		}
	}
}

func TestTestCommand(t *testing.T) {
	good := writePolicy(t, evalPolicy+`
test "halves" {
  input  {"n": 4}
  expect {"n": 4, "half": 2}
}
test "drops negatives" {
  input  {"n": -4}
  expect dropped
}
test "faults on zero" {
  input  {"n": 0}
  expect fault
}
`)
	code, out, _ := runWith("", "test", good)
	if code != 0 || !strings.HasSuffix(out, "3 passed, 0 failed\n") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	wrong := writePolicy(t, evalPolicy+`
test "wrong" {
  input  {"n": 4}
  expect {"n": 4, "half": 3}
}
`)
	code, out, _ = runWith("", "test", "--backend", "vm", wrong)
	for _, s := range []string{"FAIL", `.half: want 3 (int), got 2 (int)`, "0 passed, 1 failed"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if code, _, _ := runWith("", "test", "--backend", "x", good); code != 2 {
		t.Errorf("bad backend: exit %d", code)
	}
}

func TestDisasm(t *testing.T) {
	p := writePolicy(t, evalPolicy)
	code, out, errs := runWith("", "disasm", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, s := range []string{`policy "e"`, "GETG", "p0 .n, int", "LT_INT", "DIV_INT", "SET", "p1 .half", "; line 6"} {
		if !strings.Contains(out, s) {
			t.Errorf("disasm lacks %q:\n%s", s, out)
		}
	}
	if code, _, _ := runWith("", "disasm"); code != 2 {
		t.Errorf("no file: exit %d", code)
	}
}

// A policy's functions: eval runs them on both backends alike, test runs
// their test blocks, and disasm shows the inlined calls.
func TestFunctions(t *testing.T) {
	p := writePolicy(t, `policy "f"
const suffix = ".0"
fn mask(ip: string, keep: int = 3) string {
  let parts = split(ip, ".")
  if len(parts) != 4 {
    return ip
  }
  return join(slice(parts, 0, keep), ".") + suffix
}
set .ip = mask(to_string(.ip))

test "masks" {
  input  {"ip": "10.1.2.3"}
  expect {"ip": "10.1.2.0"}
}
`)
	for _, backend := range []string{"vm", "lua"} {
		code, out, errs := runWith(`{"ip":"10.1.2.3"}`+"\n"+`{"ip":"::1"}`+"\n", "eval", "--policy", p, "--backend", backend)
		if code != 0 || out != `{"ip":"10.1.2.0"}`+"\n"+`{"ip":"::1"}`+"\n" {
			t.Errorf("eval --backend %s: exit %d, out %q, err %s", backend, code, out, errs)
		}
	}
	if code, out, errs := runWith("", "test", p); code != 0 || !strings.Contains(out, "1 passed, 0 failed") {
		t.Errorf("test: exit %d: %s%s", code, out, errs)
	}
	code, out, errs := runWith("", "disasm", p)
	if code != 0 || !strings.Contains(out, "in fn mask inlined at line 10") {
		t.Errorf("disasm: exit %d: %s%s", code, out, errs)
	}
}

// eval --param gives a policy's parameters their values on both backends
// alike, a string bare and the rest as JSON; every mistake in the values
// is reported at once, before any record, and check needs no values.
func TestEvalParams(t *testing.T) {
	p := writePolicy(t, `policy "p"
param env: string
param keep: int = 3
param skip: array<string> = ["/healthz"]
param prefix: string = "^/api/"
drop when .path in skip
set .env = env
set .k = keep + 1
set .api = matches(as_string(.path) ?? "", prefix)
`)
	in := `{"path":"/healthz"}` + "\n" + `{"path":"/v/x"}` + "\n" + `{"path":"/w"}` + "\n"
	for _, backend := range []string{"vm", "lua"} {
		code, out, errs := runWith(in, "eval", "--policy", p, "--backend", backend,
			"--param", "env=prod", "--param", `skip=["/v/x"]`, "--param", "prefix=^/w")
		want := `{"path":"/healthz","env":"prod","k":4,"api":false}` + "\n" + `{"path":"/w","env":"prod","k":4,"api":true}` + "\n"
		if code != 0 || out != want {
			t.Errorf("eval --backend %s: exit %d, out %q, err %s", backend, code, out, errs)
		}
	}
	code, out, errs := runWith(in, "eval", "--policy", p, "--param", "keep=three", "--param", "evn=prod")
	wantAll(t, "bad values: stderr", errs, "E0610", "parameter env has no value", "E0611", "did you mean env?", "E0612", `keep is the string "three"`)
	if code != 1 || out != "" {
		t.Errorf("bad values: exit %d, out %q", code, out)
	}
	if code, _, errs := runWith("", "eval", "--policy", p, "--param", "env"); code != 2 || !strings.Contains(errs, "name=value") {
		t.Errorf("--param env: exit %d: %s", code, errs)
	}
	if code, out, errs := runWith("", "check", p); code != 0 {
		t.Errorf("check: exit %d: %s%s", code, out, errs)
	}
	// disasm folds the values: env is a constant of the code.
	if code, out, errs := runWith("", "disasm", "--param", "env=prod", p); code != 0 || !strings.Contains(out, `"prod"`) {
		t.Errorf("disasm: exit %d: %s%s", code, out, errs)
	}
	if code, _, errs := runWith("", "disasm", p); code != 1 || !strings.Contains(errs, "E0610") {
		t.Errorf("disasm without the value: exit %d: %s", code, errs)
	}
}

// TestEvalTimeClock: --time fixes the run's clock, which now() and
// dedupe read, and the summary counts drops by the statement that made
// them.
func TestEvalTimeClock(t *testing.T) {
	dir := writeFiles(t, map[string]string{"d.policy": `policy "d"
dedupe by .msg within "1m"
set .at = format_time(now(), "%Y-%m-%dT%H:%M:%SZ")
`})
	code, out, errOut := runWith("{\"msg\":\"a\"}\n{\"msg\":\"a\"}\n", "eval", "--time", "2026-05-01T10:00:00Z", "--policy", filepath.Join(dir, "d.policy"))
	if code != 0 || out != `{"msg":"a","at":"2026-05-01T10:00:00Z"}`+"\n" || !strings.Contains(errOut, "2 in, 1 out, 1 dropped (dedupe 1), 0 faulted") {
		t.Errorf("exit %d, out %q, stderr %q", code, out, errOut)
	}
}

// TestEvalCompileLimit: a policy past a limit of the VM is reported by
// eval as check reports it, a diagnostic with its code and place (E0900),
// not as a bare message.
func TestEvalCompileLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("policy \"big\"\n")
	for i := range 33_000 {
		fmt.Fprintf(&b, "set .a = %d\n", i)
	}
	code, out, errs := runWith("{}\n", "eval", "--policy", writePolicy(t, b.String()))
	if code != 1 || out != "" || !strings.Contains(errs, "error[E0900]: the policy has too many constants") || !strings.Contains(errs, "p.policy:1:1") {
		t.Errorf("exit %d, stdout %q, stderr:\n%.300s", code, out, errs)
	}
}
