package pipeline

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestOTLPInputTag checks the otlp input's tag key: its records carry the
// tag given (otlp when none is), and the outputs' match routes them by it.
func TestOTLPInputTag(t *testing.T) {
	tests := []struct {
		name     string
		tag      string   // the input's tag key; "" leaves the default
		matches  []string // the outputs' match, in config order
		want     []int64  // records each output takes
		unrouted int64
	}{
		{"given tag", "app.edge", []string{"app.*", "otlp"}, []int64{10, 0}, 0},
		{"default tag is otlp", "", []string{"app.*", "otlp"}, []int64{0, 10}, 0},
		{"exact match and catch-all", "edge", []string{"edge", "*", "edg"}, []int64{10, 10, 0}, 0},
		{"no output matches", "lonely", []string{"app.*", "otlp"}, []int64{0, 0}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var outputs strings.Builder
			outputs.WriteString("  outputs:\n")
			for _, m := range tt.matches {
				outputs.WriteString("    - name: null\n      match: \"" + m + "\"\n")
			}
			var more []string
			if tt.tag != "" {
				more = append(more, "tag: "+tt.tag)
			}
			url, p, _ := otlpServer(t, outputs.String(), more...)
			if a := post(t, &http.Client{}, url, ctProtobuf, "", otlpRequest(t, 0, 10, false)); a.status != 200 {
				t.Fatalf("%d %s", a.status, a.body)
			}
			// The null outputs count a Write before it returns, and the
			// request is answered once every output has its records.
			s := p.Summary()
			for i, want := range tt.want {
				if got := s.Outputs[i].Out; got != want {
					t.Errorf("output %d (match %q) took %d records, want %d", i, tt.matches[i], got, want)
				}
			}
			if s.In != 10 || s.Unrouted != tt.unrouted {
				t.Errorf("in %d, unrouted %d; want 10, %d", s.In, s.Unrouted, tt.unrouted)
			}
		})
	}
}

// TestOTLPInputTagInRecords checks that the tag is the records' own: a
// policy reads it (%tag) into an attribute, which the stdout output
// writes.
func TestOTLPInputTagInRecords(t *testing.T) {
	for _, tag := range []string{"", "edge.gateway"} {
		want := tag
		if want == "" {
			want = "otlp"
		}
		t.Run(want, func(t *testing.T) {
			dir := t.TempDir()
			policy := writePolicy(t, "policy \"p\"\n\nset .attributes.input_tag = %tag\n")
			var settings []string
			if tag != "" {
				settings = append(settings, "tag: "+tag)
			}
			cfg := writeConfig(t, dir, otlpYAML("  filters:\n    - name: policy\n      file: "+policy+"\n"+toStdout, settings...))
			var out, log bytes.Buffer
			p, err := New(cfg, Options{Stdout: &out, Logger: testLogger(&log)})
			if err != nil {
				t.Fatal(err)
			}
			stop := background(t, p)
			url := "http://" + p.OTLPAddrs()[0].String() + OTLPPath
			a := post(t, &http.Client{}, url, ctJSON, "", otlpRequest(t, 0, 3, true))
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if a.status != 200 {
				t.Fatalf("%d %s", a.status, a.body)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 3 {
				t.Fatalf("stdout has %d lines, want 3:\n%s", len(lines), out.String())
			}
			for _, l := range lines {
				if !strings.Contains(l, `"input_tag":"`+want+`"`) {
					t.Errorf("record without input_tag %q: %s", want, l)
				}
			}
		})
	}
}

// TestOTLPInputDefaultMaxRequestSize checks the default max_request_size
// (20M: 20 MiB) where the input enforces it: a body one byte over is
// refused with 413, and the answer names the limit in bytes (so a smaller
// default fails too). (A body of exactly the limit is not sent: reading
// 20 MiB takes seconds under -race.)
func TestOTLPInputDefaultMaxRequestSize(t *testing.T) {
	url, p, _ := otlpServer(t, toNull)
	const limit = 20 << 20
	a := post(t, &http.Client{}, url, ctProtobuf, "", make([]byte, limit+1))
	if want := "max_request_size is 20971520"; a.status != 413 || !strings.Contains(string(a.body), want) {
		t.Errorf("%d bytes: %d %q, want 413 with %q", limit+1, a.status, a.body, want)
	}
	if got := p.Summary().Inputs[0].Requests[413]; got != 1 {
		t.Errorf("%d requests counted as 413, want 1", got)
	}
}
