package policyrun

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/internal/gen"
	"github.com/policyrun/policyrun/internal/testkit/racedetect"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

var clock = WithClock(spec.FixedClock(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)))

func mustCompile(t testing.TB, src string, opts ...Option) *Policy {
	t.Helper()
	p, err := Compile("t.policy", []byte(src), append([]Option{clock}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func k8sPolicy(t testing.TB) []byte {
	src, err := os.ReadFile("examples/k8s/k8s.policy")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// k8sLines is n of B1's Kubernetes records, as JSON lines.
func k8sLines(t testing.TB, n int) []byte {
	var b bytes.Buffer
	if err := gen.Write(&b, "k8s", n, 1); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const plain = `policy "p"
schema {
  s: string
  n: int?
  ...
}
drop when .s == "drop"
set .u = upper(.s)
set .n = (.n ?? 0) + 1
`

// TestProcess holds every format on every backend to the same output:
// kept records in order, drops and faults counted, malformed input passed
// on unchanged where it stood.
func TestProcess(t *testing.T) {
	tests := []struct {
		name string
		f    Format
		in   string
		out  string
		want Counts
	}{
		{"json", JSON, "{\"s\":\"a\"}\n\n{\"s\":\"drop\"}\n{\"s\":1}\n{\"s\":\"b\",\"n\":2}",
			"{\"s\":\"a\",\"u\":\"A\",\"n\":1}\n{\"s\":1}\n{\"s\":\"b\",\"n\":3,\"u\":\"B\"}\n",
			counts(4, 1, 3, 0, spec.TypeMismatch)},
		{"json malformed", JSON, "{\"s\":\"a\"}\n{\"s\":\n{\"s\":\"b\"}\n",
			"{\"s\":\"a\",\"u\":\"A\",\"n\":1}\n{\"s\":\n{\"s\":\"b\",\"u\":\"B\",\"n\":1}\n",
			counts(2, 0, 3, 1)},
		{"json empty", JSON, "", "", Counts{}},
		{"msgpack", Msgpack, "\x81\xa1s\xa1a\x81\xa1s\xa4drop", "\x83\xa1s\xa1a\xa1u\xa1A\xa1n\x01", counts(2, 1, 1, 0)},
		{"msgpack malformed at the end", Msgpack, "\x81\xa1s\xa1a\x81\xa1s", "\x83\xa1s\xa1a\xa1u\xa1A\xa1n\x01\x81\xa1s", counts(1, 0, 2, 1)},
		{"otlp-json", OTLPJSON, `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"x"}}]}]}]}`,
			`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"x"}}]}]}]}`,
			counts(1, 0, 1, 0, spec.TypeMismatch)},
	}
	for _, b := range backend.Names() {
		p := mustCompile(t, plain, WithBackend(b))
		for _, tt := range tests {
			out, c, err := p.Process([]byte("prefix:"), []byte(tt.in), tt.f)
			if err != nil {
				t.Errorf("%s: %s: %v", b, tt.name, err)
				continue
			}
			if got := string(out); got != "prefix:"+tt.out {
				t.Errorf("%s: %s:\n got %q\nwant %q", b, tt.name, got, "prefix:"+tt.out)
			}
			if c != tt.want {
				t.Errorf("%s: %s: counts %+v, want %+v", b, tt.name, c, tt.want)
			}
		}
	}
}

func counts(runs, dropped, out, malformed uint64, faults ...spec.Reason) Counts {
	c := Counts{Out: out, Malformed: malformed}
	c.Runs, c.Dropped = runs, dropped
	for _, r := range faults {
		c.Faults[r]++
	}
	return c
}

// TestProcessChunks runs more records than one chunk, with malformed lines
// between them: every record comes out once, in order.
func TestProcessChunks(t *testing.T) {
	p := mustCompile(t, "policy \"p\"\nschema {\n  i: int\n  ...\n}\nset .j = .i * 2\n")
	var in, want strings.Builder
	for i := range 3*chunk + 7 {
		if i%100 == 99 {
			fmt.Fprintf(&in, "{bad %d\n", i)
			fmt.Fprintf(&want, "{bad %d\n", i)
			continue
		}
		fmt.Fprintf(&in, "{\"i\":%d}\n", i)
		fmt.Fprintf(&want, "{\"i\":%d,\"j\":%d}\n", i, 2*i)
	}
	b := p.NewBatch()
	for range 2 { // the second time over a used arena
		out, c, err := b.Process(nil, []byte(in.String()), JSON)
		if err != nil || string(out) != want.String() {
			t.Fatalf("err %v, output differs: got %d bytes, want %d", err, len(out), want.Len())
		}
		if c.Malformed != 7 || c.Out != 3*chunk+7 || c.Runs != 3*chunk {
			t.Errorf("counts %+v", c)
		}
	}
}

// TestProcessOTLPBackends runs B5's OTLP requests through the example
// OTLP policy on both backends, in protobuf and in OTLP/JSON: the same
// requests come out.
func TestProcessOTLPBackends(t *testing.T) {
	src, err := os.ReadFile("examples/otlp/otlp.policy")
	if err != nil {
		t.Fatal(err)
	}
	reqs := gen.OTLPRequests(500, 1)
	var outs [2][][]byte
	for i, b := range backend.Names() {
		p, err := Compile("otlp.policy", src, clock, WithBackend(b))
		if err != nil {
			t.Fatal(err)
		}
		if !p.OTLP() || p.Name() == "" {
			t.Errorf("%s: OTLP %v, name %q", b, p.OTLP(), p.Name())
		}
		for _, req := range reqs {
			out, c, err := p.Process(nil, req, OTLP)
			if err != nil || c.Runs != gen.OTLPBatch || c.Out == 0 {
				t.Fatalf("%s: %v, %+v", b, err, c)
			}
			outs[i] = append(outs[i], out)
		}
	}
	// The bytes may differ (an edited record is encoded from its view,
	// an untouched one as it came); what the records hold may not.
	for i := range outs[0] {
		if a, b := views(t, outs[0][i]), views(t, outs[1][i]); a != b {
			t.Errorf("request %d: the backends differ:\n%s\n%s", i, a, b)
		}
	}
	p := mustCompile(t, string(src))
	for _, f := range []Format{OTLP, OTLPJSON} {
		dst := []byte("kept")
		out, _, err := p.Process(dst, []byte("\x0a\xff"), f)
		if err == nil || !errors.As(err, new(*record.DecodeError)) || string(out) != "kept" {
			t.Errorf("%v: a bad request: %q, %v", f, out, err)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, src string
		opts      []Option
		codes     []string // the diagnostics' codes; nil: a plain error
	}{
		{"syntax", "policy \"p\"\nset .a = 1 +\n", nil, []string{"E0023"}},
		{"type errors", "policy \"p\"\nschema {\n  s: string\n}\nset .a = .s + 1\nset .b = .t\n", nil, []string{"E0303", "E0201"}},
		{"lua too", "policy \"p\"\nschema {\n  s: string\n}\nset .a = .s + 1\n", []Option{WithBackend("lua")}, []string{"E0303"}},
		{"unknown backend", "policy \"p\"\n", []Option{WithBackend("luajit")}, nil},
	}
	for _, tt := range tests {
		p, err := Compile("p.policy", []byte(tt.src), tt.opts...)
		if p != nil || err == nil {
			t.Errorf("%s: compiled", tt.name)
			continue
		}
		var perr *Error
		if !errors.As(err, &perr) {
			if tt.codes != nil {
				t.Errorf("%s: %T %v, want an *Error", tt.name, err, err)
			}
			continue
		}
		var codes []string
		for _, d := range perr.List {
			codes = append(codes, d.Code)
			if d.Pos.Line == 0 || d.Filename != "p.policy" {
				t.Errorf("%s: %v has no position", tt.name, d)
			}
		}
		if fmt.Sprint(codes) != fmt.Sprint(tt.codes) {
			t.Errorf("%s: codes %v, want %v", tt.name, codes, tt.codes)
		}
	}
	p := mustCompile(t, "policy \"p\"\nschema {\n  s: string?\n  ...\n}\nset .t = .s ?? \"x\"\nset .t = \"y\"\n")
	if p.Name() != "p" {
		t.Errorf("name %q", p.Name())
	}
	_ = p.Warnings() // a policy may have none; Compile succeeded with them
}

// TestProcessConcurrent runs one Policy from many goroutines (with -race):
// each gets its own output.
func TestProcessConcurrent(t *testing.T) {
	for _, b := range backend.Names() {
		p, err := Compile("k8s.policy", k8sPolicy(t), clock, WithBackend(b))
		if err != nil {
			t.Fatal(err)
		}
		in := k8sLines(t, 500)
		want, _, err := p.Process(nil, in, JSON)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					got, _, err := p.Process(nil, in, JSON)
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("%s: a concurrent run differs (%v)", b, err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
}

// TestBatchAllocs holds the batch path to no allocation per record in the
// steady state: JSON lines, msgpack events and OTLP requests.
func TestBatchAllocs(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("the race detector allocates")
	}
	p, err := Compile("k8s.policy", k8sPolicy(t), clock)
	if err != nil {
		t.Fatal(err)
	}
	in := k8sLines(t, 1000)
	var mp []byte
	a := record.NewArena()
	for line := range bytes.Lines(in) {
		rec, err := a.DecodeJSON(line, record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		mp = rec.AppendMsgpack(mp)
	}
	otlp := mustCompile(t, "policy \"o\"\nschema otlp\ndrop when .severity_number < 9\nset .attributes[\"x\"] = \"y\"\n")
	req := gen.OTLPRequests(1, 1)[0]
	tests := []struct {
		name string
		p    *Policy
		in   []byte
		f    Format
	}{
		{"json", p, in, JSON},
		{"msgpack", p, mp, Msgpack},
		{"otlp", otlp, req, OTLP},
	}
	for _, tt := range tests {
		b := tt.p.NewBatch()
		var out []byte
		allocs := testing.AllocsPerRun(20, func() {
			out, _, err = b.Process(out[:0], tt.in, tt.f)
		})
		if err != nil {
			t.Fatal(err)
		}
		if allocs > 0 {
			t.Errorf("%s: %v allocations a call", tt.name, allocs)
		}
	}
}

// views is the records of an OTLP request as JSON lines of their views.
func views(t *testing.T, req []byte) string {
	a := record.NewArena()
	recs, err := a.DecodeOTLP(req, record.Referenced, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	for _, r := range recs {
		b = append(r.AppendJSON(b), '\n')
	}
	return string(b)
}

// TestWithRandom fixes uuid_v4's bits: the same seed gives the same uuid
// on every backend, another seed another.
func TestWithRandom(t *testing.T) {
	const src = "policy \"u\"\nset .id = uuid_v4()\n"
	in := []byte("{}\n")
	run := func(b string, seed uint64) string {
		out, _, err := mustCompile(t, src, WithBackend(b), WithRandom(spec.SeededRandom(seed))).Process(nil, in, JSON)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	first := run("vm", 1)
	for _, b := range backend.Names() {
		if got := run(b, 1); got != first {
			t.Errorf("%s, seed 1: %s, want %s as on the vm", b, got, first)
		}
		if got := run(b, 2); got == first {
			t.Errorf("%s: seeds 1 and 2 both give %s", b, got)
		}
	}
}
