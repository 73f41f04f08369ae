package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/record"
)

const splitPolicy = `policy "split"
schema {
  n: int
  items: array<int>?
  ...
}
split .items
drop when .items == 0
set .inv = 12 / (.items - 1)
`

// TestStagePolicySplits runs a policy with split through a pipeline on
// each backend: a record's records take its place, in order, each
// dropped or faulted on its own, and the summary counts them (split,
// drops by reason).
func TestStagePolicySplits(t *testing.T) {
	var lines, want []string
	for n := 0; n < 30; n++ {
		switch n % 3 {
		case 0: // split: 0 dropped, 1 faults (12 / 0), 3 kept
			lines = append(lines, fmt.Sprintf(`{"n":%d,"items":[0,1,3]}`, n))
			want = append(want, fmt.Sprintf(`{"n":%d,"items":1}`, n), fmt.Sprintf(`{"n":%d,"items":3,"inv":6}`, n))
		case 1: // empty: no records
			lines = append(lines, fmt.Sprintf(`{"n":%d,"items":[]}`, n))
		case 2: // absent: whole
			lines = append(lines, fmt.Sprintf(`{"n":%d}`, n))
			want = append(want, lines[n])
		}
	}
	for _, b := range []string{"vm", "lua"} {
		t.Run(b, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "in.log", strings.Join(lines, "\n")+"\n")
			writeFile(t, dir, "s.policy", splitPolicy)
			filter := "  filters:\n    - name: policy\n      backend: " + b + "\n      file: s.policy\n"
			cfg := tailConfig(t, dir, filter+toStdout, "in.log", "parser: json", "exit_on_eof: true", "poll_interval: 10ms")
			var out bytes.Buffer
			s := runPipeline(t, cfg, Options{Stdout: &out}).Summary()
			if got := strings.TrimSpace(out.String()); got != strings.Join(want, "\n") {
				t.Errorf("output\n%s\nwant\n%s", got, strings.Join(want, "\n"))
			}
			// 30 in; 10 records split into 3 (20 added); 10 dropped
			// there and 10 empty: 20 dropped; 10 faulted.
			if s.In != 30 || s.Split != 20 || s.Dropped != 20 || s.Faulted != 10 || s.Out != 30 || s.Drops["split_empty"] != 10 {
				t.Errorf("summary = %+v", s)
			}
			if f := s.Filters[0]; f.Split != 20 || f.Drops["split_empty"] != 10 {
				t.Errorf("filter = %+v", f)
			}
			var sum bytes.Buffer
			s.Write(&sum)
			for _, want := range []string{"split 20", "drops: split_empty 10"} {
				if !strings.Contains(sum.String(), want) {
					t.Errorf("the summary lacks %q:\n%s", want, sum.String())
				}
			}
		})
	}
}

// TestMergeSplitFirstDropped: a policy's split may drop the first record
// and keep the ones after it, which still take the original's place.
func TestMergeSplitFirstDropped(t *testing.T) {
	a := record.NewArena()
	r := make([]*record.Record, 7)
	for i := range r {
		r[i] = a.NewRecord()
	}
	// recs 0..3; the stage ran over 1 and 3: 1 split into 1, 4, 5 with 1
	// dropped; 3 into 3, 6 with 3 dropped.
	recs := []*record.Record{r[0], r[1], r[2], r[3]}
	got := mergeSplit(recs, []*record.Record{r[1], r[3]}, []*record.Record{r[4], r[5], r[6]}, []int32{2, 1})
	want := []*record.Record{r[0], r[4], r[5], r[2], r[6]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestSplitExample runs examples/split: batches of client events, one
// record per event.
func TestSplitExample(t *testing.T) {
	cfg := loadExample(t, "split")
	var out bytes.Buffer
	s := runPipeline(t, cfg, Options{Stdout: &out}).Summary()
	want := []string{
		`{"client":"ios-1","sent_at":"2026-12-05T10:00:00Z","batch_size":3,"event":"open","level":"INFO","duration_ms":120}`,
		`{"client":"ios-1","sent_at":"2026-12-05T10:00:00Z","batch_size":3,"event":"crash","level":"ERROR","duration_ms":0}`,
		`{"client":"web-2","sent_at":"2026-12-05T10:00:02Z","batch_size":0}`,
		`{"client":"web-2","sent_at":"2026-12-05T10:00:03Z","batch_size":1,"event":"load","level":"INFO","duration_ms":840}`,
	}
	if got := strings.TrimSpace(out.String()); got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if s.In != 4 || s.Out != 4 || s.Dropped != 2 || s.Split != 2 || s.Drops["split_empty"] != 1 {
		t.Errorf("summary = %+v", s)
	}
}

// TestOTLPInputSplit: through an otlp input, the records a split makes
// follow the original in order, with its resource and scope.
func TestOTLPInputSplit(t *testing.T) {
	pol := writePolicy(t, "policy \"s\"\nschema otlp {\n  attributes: {items: array<string>?, ...}\n}\nsplit .attributes.items\nset .body = .attributes.items\n")
	out := filepath.Join(t.TempDir(), "out.json")
	url, p, stop := otlpServer(t, "  filters:\n    - name: policy\n      file: "+pol+"\n  outputs:\n    - name: file\n      path: "+out+"\n")
	str := func(s string) string { return `{"stringValue":"` + s + `"}` }
	req := `{"resourceLogs":[{"resource":{"attributes":[{"key":"r","value":` + str("1") + `}]},"scopeLogs":[{"scope":{"name":"s"},"logRecords":[` +
		`{"body":` + str("a") + `,"attributes":[{"key":"items","value":{"arrayValue":{"values":[` + str("x") + `,` + str("y") + `]}}}]},` +
		`{"body":` + str("b") + `}]}]}]}`
	if a := post(t, &http.Client{}, url, "application/json", "", []byte(req)); a.status != 200 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	stop()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var v struct {
			Body     string
			Resource struct{ Attributes map[string]string }
			Scope    struct{ Name string }
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		bodies = append(bodies, fmt.Sprintf("%s/%s/%s", v.Resource.Attributes["r"], v.Scope.Name, v.Body))
	}
	if got := strings.Join(bodies, " "); got != "1/s/x 1/s/y 1/s/b" {
		t.Errorf("records %s\n%s", got, b)
	}
	if s := p.Summary(); s.In != 2 || s.Out != 3 || s.Split != 1 {
		t.Errorf("summary:\n%s", summaryText(s))
	}
}

// TestStageMaxSplit runs a filter's max_split on each backend: a split of
// more elements than it allows faults split_limit and leaves the record
// as it came; one within it splits.
func TestStageMaxSplit(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "s.policy", "policy \"s\"\nschema {\n  items: array<int>?\n  ...\n}\nsplit .items\n")
	for _, b := range []string{"vm", "lua"} {
		proc, err := NewStage(config.Filter{File: "s.policy", Backend: b, MaxSplit: 2}, dir)
		if err != nil {
			t.Fatal(err)
		}
		a := record.NewArena()
		var recs []*record.Record
		for _, line := range []string{`{"items":[1,2]}`, `{"items":[1,2,3]}`} {
			r, err := a.DecodeJSON([]byte(line), record.Referenced)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, r)
		}
		out, c := proc.Process(recs)
		var got []string
		for _, r := range out {
			got = append(got, string(r.AppendJSON(nil)))
		}
		want := `{"items":1} {"items":2} {"items":[1,2,3]}`
		if strings.Join(got, " ") != want || c.Faults["split_limit"] != 1 {
			t.Errorf("%s: %s, faults %v; want %s and one split_limit", b, strings.Join(got, " "), c.Faults, want)
		}
	}
}
