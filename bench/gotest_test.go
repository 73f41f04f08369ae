package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseBench(t *testing.T) {
	text := `goos: linux
pkg: github.com/policyrun/policyrun/record
BenchmarkRecordDecode/referenced-2         	     100	       304.4 ns/op	       720.0 arena-B/record	       0 B/op	       0 allocs/op
BenchmarkRecordDecode/referenced-2         	     100	       310 ns/op	       720.0 arena-B/record	       0 B/op	       0 allocs/op
PASS
pkg: github.com/policyrun/policyrun/pipeline/checkpoint
BenchmarkCheckpoint/save/json/files=1-2   	     100	      6987 ns/op	      2049 bytes/checkpoint	     912 B/op	      16 allocs/op
ok  	github.com/policyrun/policyrun/pipeline/checkpoint	0.007s
`
	set, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Names("BenchmarkRecordDecode/"); len(got) != 1 || got[0] != "BenchmarkRecordDecode/referenced" {
		t.Fatalf("names = %q", got)
	}
	if got := set.Stat("BenchmarkRecordDecode/referenced", "ns/op"); got != (Stat{307.2, 304.4, 310, 2}) {
		t.Errorf("stat = %+v", got)
	}
	if l := set.Lines[2]; l.Pkg != "github.com/policyrun/policyrun/pipeline/checkpoint" || l.Metrics["bytes/checkpoint"] != 2049 {
		t.Errorf("line = %+v", l)
	}

	// -json: a result line may come in two output events.
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	for _, ev := range []testEvent{
		{Action: "start", Package: "p"},
		{Action: "output", Package: "p", Output: "BenchmarkOTLP/decode/arena\n"},
		{Action: "output", Package: "p", Output: "BenchmarkOTLP/decode/arena-2         \t"},
		{Action: "output", Package: "p", Output: "     100\t     80070 ns/op\t       800.7 ns/record\n"},
		{Action: "output", Package: "q", Output: "BenchmarkX-2 \t 5\t 1 ns/op\n"},
		{Action: "pass", Package: "p"},
	} {
		enc.Encode(ev)
	}
	set, err = Parse(&js)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Lines) != 2 || set.Lines[0].Name != "BenchmarkOTLP/decode/arena" || set.Lines[0].Metrics["ns/record"] != 800.7 ||
		set.Lines[1].Pkg != "q" {
		t.Fatalf("lines = %+v", set.Lines)
	}

	// Written back as text, read again: the same.
	var back bytes.Buffer
	set.WriteText(&back)
	again, err := Parse(&back)
	if err != nil || len(again.Lines) != 2 || again.Lines[0].Metrics["ns/op"] != 80070 || again.Lines[1].Pkg != "q" {
		t.Fatalf("round trip: %v %+v\n%s", err, again, back.String())
	}

	// GOMAXPROCS 1: no suffix, and a name's own -N stays.
	set, _ = Parse(strings.NewReader("BenchmarkA/x-12 10 1 ns/op\nBenchmarkB/y 10 1 ns/op\n"))
	if set.Lines[0].Name != "BenchmarkA/x-12" {
		t.Errorf("name = %q", set.Lines[0].Name)
	}
}
