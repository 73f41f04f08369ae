package main

import (
	"strings"
	"testing"
)

// TestEvalSplit: eval writes the records a split makes in order, on each
// backend and for JSON lines and OTLP/JSON alike, and its summary counts
// what the split added and the drop of an empty array by its reason.
func TestEvalSplit(t *testing.T) {
	plain := writePolicy(t, "policy \"s\"\nschema {\n  xs: array<int>?\n  ...\n}\nsplit .xs\ndrop when .xs == 0\n")
	otlp := writePolicy(t, "policy \"o\"\nschema otlp {\n  attributes: {xs: array<string>?, ...}\n}\nsplit .attributes.xs\nset .body = .attributes.xs\nremove .attributes.xs\n")
	str := func(s string) string { return `{"stringValue":"` + s + `"}` }
	req := `{"resourceLogs":[{"resource":{"attributes":[{"key":"r","value":` + str("1") + `}]},"scopeLogs":[{"scope":{"name":"s"},"logRecords":[` +
		`{"body":` + str("a") + `,"attributes":[{"key":"xs","value":{"arrayValue":{"values":[` + str("x") + `,` + str("y") + `]}}}]},{"body":` + str("b") + `}]}]}]}`
	for _, backend := range []string{"vm", "lua"} {
		code, out, errs := runWith(`{"xs":[1,0,2],"k":1}`+"\n"+`{"xs":[]}`+"\n"+`{"k":2}`+"\n", "eval", "--policy", plain, "--backend", backend)
		want := `{"xs":1,"k":1}` + "\n" + `{"xs":2,"k":1}` + "\n" + `{"k":2}` + "\n"
		if code != 0 || out != want {
			t.Errorf("%s: exit %d, stdout\n%s\nwant\n%s", backend, code, out, want)
		}
		if s := "eval: 3 in, 3 out, 2 dropped (split_empty 1), 0 faulted, 2 added by split"; !strings.Contains(errs, s) {
			t.Errorf("%s: stderr lacks %q:\n%s", backend, s, errs)
		}
		code, out, errs = runWith(req, "eval", "--policy", otlp, "--backend", backend, "--in", "otlp-json", "--out", "otlp-json")
		want = `"logRecords":[{"body":{"stringValue":"x"}},{"body":{"stringValue":"y"}},{"body":{"stringValue":"b"}}]`
		if code != 0 || !strings.Contains(out, want) || strings.Count(out, `"resource"`) != 1 {
			t.Errorf("%s: OTLP: exit %d, stdout\n%s\nwant one resource and %s\n%s", backend, code, out, want, errs)
		}
	}
}
