package pipeline

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/policyrun/policyrun/internal/gen"

	"github.com/policyrun/policyrun/record"
)

// TestOTLPFields: an otlp input builds only the keys its policies read and
// write when no output reads records, and whole records else.
func TestOTLPFields(t *testing.T) {
	all := record.OTLPProjection{Fields: record.OTLPAllFields}
	added := record.OTLPProjection{Attributes: []string{"bench.added"}}
	body := record.OTLPFieldsOf([]record.Path{{record.KeyStep("body")}})
	sev := record.OTLPFieldsOf([]record.Path{{record.KeyStep("severity_number")}})
	add := "policy \"add\"\n\nset .attributes.\"bench.added\" = \"yes\"\n"
	for _, tt := range []struct {
		name     string
		policies []string
		outputs  string
		want     record.OTLPProjection
	}{
		{"ingest into null", nil, "    - name: null\n      encode: false\n", record.OTLPProjection{}},
		{"add an attribute", []string{add}, "    - name: null\n      encode: false\n", added},
		{"two policies", []string{add, "policy \"d\"\n\ndrop when .body.n == 3 || (as_int(.severity_number) ?? 0) < 9\n"},
			"    - name: null\n      encode: false\n", record.OTLPProjection{Fields: body | sev, Attributes: []string{"bench.added"}}},
		{"the whole record", []string{"policy \"w\"\n\nset .copy = keys(.)\n"}, "    - name: null\n      encode: false\n", all},
		{"a null output that encodes", nil, "    - name: null\n", all},
		{"a buffered null output", nil, "    - name: null\n      buffer: {type: memory}\n", record.OTLPProjection{Wire: true}},
		{"an otlp output", []string{add}, "    - name: otlp\n      endpoint: http://127.0.0.1:9\n", record.OTLPProjection{Attributes: []string{"bench.added"}, Wire: true}},
		{"an otlp output in JSON", []string{add}, "    - name: otlp\n      endpoint: http://127.0.0.1:9\n      encoding: json\n", all},
		{"an http output", nil, "    - name: http\n      uri: http://127.0.0.1:9/\n", all},
		{"another output too", []string{add}, "    - name: null\n      encode: false\n    - name: stdout\n", all},
		{"a Lua script", []string{"lua"}, "    - name: null\n      encode: false\n", all},
		{"a policy with split", []string{"policy \"s\"\nschema otlp {\n  attributes: {xs: array<int>?, ...}\n}\nsplit .attributes.xs\n"}, "    - name: otlp\n      endpoint: http://127.0.0.1:9\n", all},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			src := "pipeline:\n  inputs:\n    - name: otlp\n      listen: 127.0.0.1:0\n"
			if len(tt.policies) > 0 {
				src += "  filters:\n"
			}
			for i, p := range tt.policies {
				if p == "lua" {
					src += "    - name: lua\n      call: f\n      code: \"function f(tag, ts, r) return 0, ts, r end\"\n"
					continue
				}
				name := string(rune('a'+i)) + ".policy"
				writeFile(t, dir, name, p)
				src += "    - name: policy\n      file: " + name + "\n"
			}
			p, err := New(writeConfig(t, dir, src+"  outputs:\n"+tt.outputs), Options{Check: true})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if got := p.gen.Load().keep; fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tt.want) {
				t.Errorf("keep %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestOTLPInputProjected: records built in part still run their policies
// (a drop that reads the body, and no more) and are counted; a request with a bad part
// that is not built is refused as before.
func TestOTLPInputProjected(t *testing.T) {
	pol := writePolicy(t, "policy \"d\"\n\ndrop when .body.n == 3\n")
	url, p, stop := otlpServer(t, "  filters:\n    - name: policy\n      file: "+pol+"\n  outputs:\n    - name: null\n      encode: false\n")
	if keep := p.gen.Load().keep; keep.Fields != record.OTLPFieldsOf([]record.Path{{record.KeyStep("body")}}) || keep.Attributes != nil {
		t.Fatalf("keep %+v: not the body alone", keep)
	}
	c := &http.Client{}
	if a := post(t, c, url, ctProtobuf, "", otlpRequest(t, 0, 10, false)); a.status != 200 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	// A LogRecord whose attribute key is not UTF-8: the attributes are
	// not built.
	bad := []byte{0x0a, 0x0a, 0x12, 0x08, 0x12, 0x06, 0x32, 0x04, 0x0a, 0x02, 'k', 0xff}
	if a := post(t, c, url, ctProtobuf, "", bad); a.status != 400 {
		t.Errorf("a request with a bad resource: %d %s", a.status, a.body)
	}
	stop()
	s := p.Summary()
	if in := s.Inputs[0]; in.In != 10 || in.Requests[200] != 1 || in.Requests[400] != 1 {
		t.Errorf("input summary %+v", in)
	}
	if s.Filters[0].Dropped != 1 || s.Out != 9 {
		t.Errorf("summary:\n%s", summaryText(s))
	}
}

// otlpJSON is what an OTLP/protobuf request says, as OTLP/JSON written
// from the views of its records.
func otlpJSON(t *testing.T, req []byte) string {
	t.Helper()
	if zr, err := gzip.NewReader(bytes.NewReader(req)); err == nil { // the otlp output's default
		if req, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := record.NewArena().DecodeOTLP(req, record.Referenced, nil)
	if err != nil {
		t.Fatalf("a request does not decode: %v", err)
	}
	enc := record.OTLPEncoder{FromViews: true}
	return string(enc.AppendJSON(nil, recs))
}

// TestOTLPWireGateway: an otlp input → policy → otlp output gateway, whose
// records stand on their LogRecords' bytes (OTLPProjection.Wire), sends
// what the same gateway sends when another output makes it build every
// record whole, request by request, for policies that add attributes
// (the bytes and more), change and remove existing ones (decoded whole
// at the output), and edit the resource.
func TestOTLPWireGateway(t *testing.T) {
	reqs := gen.OTLPRequests(300, 7)
	for _, tt := range []struct{ name, policy string }{
		{"add", `set .attributes."bench.added" = "yes"`},
		{"change and remove", "set .attributes.\"http.route\" = \"/r\"\nremove .attributes.\"cache.hit\"\nset .attributes.\"bench.added\" = 1"},
		{"resource", `set .resource.attributes."deployment" = "prod"`},
		{"drop some", `drop when .severity_text == "DEBUG"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got [2][][]byte
			for i, more := range []string{"", "    - name: null\n"} {
				var mu sync.Mutex
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					b, _ := io.ReadAll(r.Body)
					mu.Lock()
					got[i] = append(got[i], b)
					mu.Unlock()
					w.Header().Set("Content-Type", ctProtobuf)
				}))
				pol := writePolicy(t, "policy \"g\"\n\n"+tt.policy+"\n")
				url, p, stop := otlpServer(t, "  filters:\n    - name: policy\n      file: "+pol+"\n"+otlpOutput(srv.URL)+more)
				if wire := p.gen.Load().keep.Wire; wire != (i == 0) {
					t.Fatalf("pipeline %d: Wire %v", i, wire)
				}
				c := &http.Client{}
				for _, req := range reqs {
					if a := post(t, c, url, ctProtobuf, "", req); a.status != 200 {
						t.Fatalf("%d %s", a.status, a.body)
					}
				}
				stop()
				srv.Close()
			}
			if len(got[0]) != len(got[1]) {
				t.Fatalf("%d requests sent, %d by the whole records", len(got[0]), len(got[1]))
			}
			for j := range got[0] {
				// The whole records write their changed fields after the
				// bytes of the others (record.appendWire), the projections
				// from their views: the same requests, maybe not the same
				// bytes.
				if !bytes.Equal(got[0][j], got[1][j]) && otlpJSON(t, got[0][j]) != otlpJSON(t, got[1][j]) {
					t.Fatalf("request %d: %d bytes, the whole records' %d, and they differ", j, len(got[0][j]), len(got[1][j]))
				}
			}
		})
	}
}
