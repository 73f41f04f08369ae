package policyrun

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/spec"
)

// TestProcessSplit runs a policy with split over JSON lines and over an
// OTLP request of two resources on every backend: each record's records
// follow in its place and order, and in OTLP stay in its resource and
// scope; the counts say what the split added and dropped.
func TestProcessSplit(t *testing.T) {
	const plain = `policy "p"
schema {
  items: array<string>?
  ...
}
split .items
drop when .items == "drop"
`
	const otlp = `policy "o"
schema otlp {
  attributes: {
    items: array<string>?
    ...
  }
}
split .attributes.items
drop when .attributes.items == "drop"
set .body = .attributes.items
remove .attributes.items
`
	str := func(s string) string { return `{"stringValue":"` + s + `"}` }
	rec := func(body string, items ...string) string {
		var vs []string
		for _, it := range items {
			vs = append(vs, str(it))
		}
		return `{"body":` + str(body) + `,"attributes":[{"key":"items","value":{"arrayValue":{"values":[` + strings.Join(vs, ",") + `]}}}]}`
	}
	res := func(name, scope string, recs ...string) string {
		return `{"resource":{"attributes":[{"key":"service.name","value":` + str(name) + `}]},"scopeLogs":[{"scope":{"name":"` + scope + `"},"logRecords":[` + strings.Join(recs, ",") + `]}]}`
	}
	req := `{"resourceLogs":[` + res("a", "s1", rec("a1", "x", "drop", "y"), rec("a2")) + "," + res("b", "s2", rec("b1", "z"), rec("b2", "u", "v")) + `]}`
	for _, b := range backend.Names() {
		p := mustCompile(t, plain, WithBackend(b))
		out, c, err := p.Process(nil, []byte(`{"items":["a","drop","b"],"k":1}`+"\n"+`{"items":[]}`+"\n"+`{"k":2}`+"\n"), JSON)
		want := `{"items":"a","k":1}` + "\n" + `{"items":"b","k":1}` + "\n" + `{"k":2}` + "\n"
		if err != nil || string(out) != want {
			t.Errorf("%s: JSON out\n%s, %v; want\n%s", b, out, err, want)
		}
		if c.Split != 2 || c.Runs != 5 || c.Dropped != 2 || c.Drops[spec.SplitEmpty] != 1 || c.Out != 3 {
			t.Errorf("%s: JSON counts %+v", b, c)
		}

		p = mustCompile(t, otlp, WithBackend(b))
		out, c, err = p.Process(nil, []byte(req), OTLPJSON)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		var got struct {
			ResourceLogs []struct {
				Resource struct {
					Attributes []struct{ Value struct{ StringValue string } }
				}
				ScopeLogs []struct {
					Scope      struct{ Name string }
					LogRecords []struct{ Body struct{ StringValue string } }
				}
			}
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: %v: %s", b, err, out)
		}
		var groups []string
		for _, rl := range got.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				var bodies []string
				for _, lr := range sl.LogRecords {
					bodies = append(bodies, lr.Body.StringValue)
				}
				groups = append(groups, fmt.Sprintf("%s/%s: %s", rl.Resource.Attributes[0].Value.StringValue, sl.Scope.Name, strings.Join(bodies, " ")))
			}
		}
		// a2 has an empty array: no record; the rest in place, in order.
		if g := strings.Join(groups, "; "); g != "a/s1: x y; b/s2: z u v" {
			t.Errorf("%s: OTLP out %s\n%s", b, g, out)
		}
		if c.Split != 3 || c.Dropped != 2 || c.Out != 5 {
			t.Errorf("%s: OTLP counts %+v", b, c)
		}
	}
}
