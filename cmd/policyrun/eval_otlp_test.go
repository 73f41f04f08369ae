package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/record"
)

const otlpPolicy = `policy "add"
schema otlp

set .attributes."bench.added" = "yes"
drop when .severity_number < 5
`

// otlpViews are three OTLP records as views: two of one resource, and one
// that the policy drops.
const otlpViews = `{"body":"hi","severity_number":9,"attributes":{"a":1},"resource":{"attributes":{"service.name":"x"}}}
{"body":"dbg","severity_number":1,"resource":{"attributes":{"service.name":"y"}}}
{"body":"hi2","severity_number":9,"resource":{"attributes":{"service.name":"x"}}}
`

func TestEvalOTLP(t *testing.T) {
	p := writePolicy(t, otlpPolicy)
	// The views as one OTLP/JSON request, through the policy: regrouped,
	// the two records of service x in one group, the debug record dropped.
	for _, backend := range []string{"vm", "lua"} {
		code, req, errs := runWith(otlpViews, "eval", "--policy", p, "--backend", backend, "--out", "otlp-json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", backend, code, errs)
		}
		if strings.Count(req, `"resource":`) != 1 || strings.Count(req, `"bench.added"`) != 2 || strings.Contains(req, "dbg") {
			t.Errorf("%s: request %s", backend, req)
		}
		if !strings.Contains(errs, "3 in, 2 out, 1 dropped") {
			t.Errorf("%s: stderr %s", backend, errs)
		}
		// OTLP/JSON → protobuf → JSON views: the same records.
		code, pb, errs := runWith(req, "eval", "--policy", p, "--backend", backend, "--in", "otlp-json", "--out", "otlp")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", backend, code, errs)
		}
		code, views, errs := runWith(pb, "eval", "--policy", p, "--backend", backend, "--in", "otlp")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", backend, code, errs)
		}
		lines := strings.Split(strings.TrimSpace(views), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: %d views: %s", backend, len(lines), views)
		}
		for i, body := range []string{"hi", "hi2"} {
			a := record.NewArena()
			rec, err := a.DecodeOTLPView([]byte(lines[i]), record.Owned)
			if err != nil {
				t.Fatalf("%s: view %d: %v", backend, i, err)
			}
			m := rec.ToGo()
			attrs, _ := m["attributes"].(map[string]any)
			if m["body"] != body || attrs["bench.added"] != "yes" || !strings.HasPrefix(lines[i], `{"time":`) {
				t.Errorf("%s: view %d: %s", backend, i, lines[i])
			}
		}
	}
}

func TestEvalOTLPRefused(t *testing.T) {
	p := writePolicy(t, otlpPolicy)
	for _, tt := range []struct{ in, format, want string }{
		{"\x0a\x05\x12", "otlp", "unexpected end of input"},
		{`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":"abc"}]}]}]}`, "otlp-json", "traceId"},
	} {
		code, out, errs := runWith(tt.in, "eval", "--policy", p, "--in", tt.format)
		if code != 1 || out != "" || !strings.Contains(errs, "the request is refused") || !strings.Contains(errs, tt.want) {
			t.Errorf("%s %q: exit %d, stdout %q, stderr %s", tt.format, tt.in, code, out, errs)
		}
	}
}

// An OTLP request may hold at most --max-request-records LogRecords, the
// otlp input's bound by default: eval holds a request's records at once,
// and 2,000,000 empty LogRecords (4 MB) took 8.4 GB to evaluate.
func TestEvalOTLPMaxRecords(t *testing.T) {
	p := writePolicy(t, otlpPolicy)
	field := func(tag byte, body []byte) []byte { // a length-delimited field
		return append(binary.AppendUvarint([]byte{tag}, uint64(len(body))), body...)
	}
	req := func(n int) string { // one ResourceLogs, one ScopeLogs, n empty LogRecords
		return string(field(0x0a, field(0x12, bytes.Repeat([]byte{0x12, 0}, n))))
	}
	for _, tt := range []struct {
		n    int
		args []string
		code int
	}{
		{5, nil, 0},
		{5, []string{"--max-request-records", "5"}, 0},
		{6, []string{"--max-request-records", "5"}, 1},
		{6, []string{"--max-request-records", "0"}, 0},
	} {
		args := append([]string{"eval", "--policy", p, "--in", "otlp"}, tt.args...)
		code, _, errs := runWith(req(tt.n), args...)
		if code != tt.code {
			t.Errorf("%d records %v: exit %d, want %d: %s", tt.n, tt.args, code, tt.code, errs)
		}
		if code == 1 && !strings.Contains(errs, "more than 5 LogRecords (--max-request-records raises the bound)") {
			t.Errorf("%d records %v: %s", tt.n, tt.args, errs)
		}
	}
	// The default is the otlp input's.
	code, _, errs := runWith(req(config.DefaultOTLPMaxRequestRecords+1), "eval", "--policy", p, "--in", "otlp")
	if code != 1 || !strings.Contains(errs, "more than "+strconv.Itoa(config.DefaultOTLPMaxRequestRecords)+" LogRecords") {
		t.Errorf("past the default: exit %d: %s", code, errs)
	}
}

func TestEvalPlainToOTLP(t *testing.T) {
	p := writePolicy(t, "policy \"p\"\nset .seen = true\n")
	code, req, errs := runWith(`{"msg":"a"}`+"\n", "eval", "--policy", p, "--out", "otlp-json", "--time", "2026-01-02T03:04:05Z")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1767323045000000000","body":{"kvlistValue":{"values":[{"key":"msg","value":{"stringValue":"a"}},{"key":"seen","value":{"boolValue":true}}]}}}]}]}]}`
	if strings.TrimSpace(req) != want {
		t.Errorf("request\n%s\nwant\n%s", req, want)
	}
}

// The examples' test blocks pass on every backend.
func TestExamplesPass(t *testing.T) {
	code, out, errs := runWith("", "test", "../../examples")
	if code != 0 || !strings.Contains(out+errs, " passed, 0 failed") {
		t.Fatalf("policyrun test examples: exit %d\n%s%s", code, out, errs)
	}
}

// TestEvalOTLPJSONStream: --in otlp-json reads a stream of JSON values, as
// jq does: one a line, pretty-printed over many, or several on one line.
// A pretty-printed request was refused ("unexpected end of input at byte
// 1"). A bad request is refused with the line it starts on.
func TestEvalOTLPJSONStream(t *testing.T) {
	p := writePolicy(t, otlpPolicy)
	code, req, errs := runWith(otlpViews, "eval", "--policy", p, "--out", "otlp-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, []byte(strings.TrimSpace(req)), "", "  "); err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]string{
		"lines":  req + req,
		"pretty": pretty.String() + "\n" + pretty.String(),
		"joined": strings.TrimSpace(req) + " " + strings.TrimSpace(req),
	} {
		code, _, errs := runWith(in, "eval", "--policy", p, "--in", "otlp-json", "--out", "otlp-json")
		if code != 0 || !strings.Contains(errs, "4 in, 4 out") {
			t.Errorf("%s: exit %d, %s", name, code, errs)
		}
	}
	code, _, errs = runWith(pretty.String()+"\n{\n  \"resourceLogs\": [ {bad\n", "eval", "--policy", p, "--in", "otlp-json")
	if code != 1 || !strings.Contains(errs, "request is refused") || !strings.Contains(errs, fmt.Sprintf("line %d:", strings.Count(pretty.String(), "\n")+2)) {
		t.Errorf("a bad request: exit %d, %s", code, errs)
	}
}
