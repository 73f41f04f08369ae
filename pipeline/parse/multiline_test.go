package parse

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/record"
)

// A fixture is a log of testdata/multiline, as a program writes it, and
// the records the built-in rules must make of it. Each line of the file
// is a marker, a space and the line: "+" begins a record, "|" continues
// it (a marker alone is an empty line).
type fixture struct {
	lines   []string
	records [][]string // the lines of each record
}

func readFixture(t testing.TB, name string) fixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "multiline", name))
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		text := strings.TrimPrefix(l[1:], " ")
		switch l[0] {
		case '+':
			f.records = append(f.records, []string{text})
		case '|':
			if len(f.records) == 0 {
				t.Fatalf("%s:%d: continues no record", name, i+1)
			}
			f.records[len(f.records)-1] = append(f.records[len(f.records)-1], text)
		default:
			t.Fatalf("%s:%d: want + or |, found %q", name, i+1, l[0])
		}
		f.lines = append(f.lines, text)
	}
	return f
}

var fixtureTime = time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)

// A format writes the lines of a fixture as a runtime writes them into
// its log file, and says what record a fixture's record must become.
type format struct {
	parser string
	// lines is what the runtime writes for the fixture's line i on a
	// stream, read at time t.
	lines func(i int, stream, line string, t time.Time) []string
	// want is the record of a fixture's record read on stream, its first
	// line at time t.
	want func(lines []string, stream string, t time.Time) map[string]any
}

// partSize is where the "parts" formats split a line into the runtime's
// partial lines, small enough to split most lines of the fixtures.
const partSize = 24

var formats = map[string]format{
	"raw": {
		parser: "raw",
		lines:  func(_ int, _, line string, _ time.Time) []string { return []string{line} },
		want: func(lines []string, _ string, _ time.Time) map[string]any {
			return map[string]any{"log": strings.Join(lines, "\n")}
		},
	},
	"cri": {
		parser: "cri",
		lines: func(_ int, stream, line string, t time.Time) []string {
			return []string{t.Format(time.RFC3339Nano) + " " + stream + " F " + line}
		},
		want: criWant,
	},
	// Long lines split into P parts, within a trace: the parts are joined
	// first, then the lines.
	"cri parts": {
		parser: "cri",
		lines: func(_ int, stream, line string, t time.Time) []string {
			var out []string
			for _, part := range split(line) {
				out = append(out, t.Format(time.RFC3339Nano)+" "+stream+" P "+part)
			}
			out[len(out)-1] = strings.Replace(out[len(out)-1], " P ", " F ", 1)
			return out
		},
		want: criWant,
	},
	"docker": {
		parser: "docker",
		lines: func(_ int, stream, line string, t time.Time) []string {
			return []string{dockerLine(line+"\n", stream, t)}
		},
		want: dockerWant,
	},
	"docker parts": {
		parser: "docker",
		lines: func(_ int, stream, line string, t time.Time) []string {
			parts := split(line + "\n")
			out := make([]string, len(parts))
			for i, p := range parts {
				out[i] = dockerLine(p, stream, t)
			}
			return out
		},
		want: dockerWant,
	},
}

func criWant(lines []string, stream string, t time.Time) map[string]any {
	return map[string]any{"stream": stream, "logtag": "F", "log": strings.Join(lines, "\n"), "@time": t.UnixNano()}
}

func dockerWant(lines []string, stream string, t time.Time) map[string]any {
	return map[string]any{"stream": stream, "log": strings.Join(lines, "\n") + "\n", "@time": t.UnixNano()}
}

func dockerLine(log, stream string, t time.Time) string {
	b, err := json.Marshal(map[string]string{"log": log, "stream": stream, "time": t.Format(time.RFC3339Nano)})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// split cuts s into parts of partSize bytes, the last one shorter.
func split(s string) []string {
	var parts []string
	for len(s) > partSize {
		parts = append(parts, s[:partSize])
		s = s[partSize:]
	}
	return append(parts, s)
}

// written is what a runtime writes for a fixture on stream: for each of
// its lines, the file's lines, and the record each fixture record must
// become.
func written(fx fixture, f format, stream string) (lines [][]string, want []map[string]any) {
	i := 0
	for _, rec := range fx.records {
		want = append(want, f.want(rec, stream, fixtureTime.Add(time.Duration(i)*time.Millisecond)))
		for range rec {
			t := fixtureTime.Add(time.Duration(i) * time.Millisecond)
			lines = append(lines, f.lines(i, stream, fx.lines[i], t))
			i++
		}
	}
	return lines, want
}

// TestMultilineFixtures runs the built-in rules over real traces of each
// language, among ordinary lines, as each parser reads them: the records
// must be exactly the fixture's. Each fixture is read on stdout alone,
// and on stdout while another is written on stderr, line for line (a
// container's runtime writes both into one file): each stream's records
// must be its fixture's, in order.
func TestMultilineFixtures(t *testing.T) {
	names := []string{"java.txt", "python.txt", "go.txt"}
	for fname, f := range formats {
		for i, name := range names {
			t.Run(fname+"/"+name, func(t *testing.T) {
				lines, want := written(readFixture(t, name), f, "stdout")
				got := runFixture(t, f.parser, [][][]string{lines})
				checkRecords(t, "stdout", got["stdout"], want)
			})
			if f.parser == "raw" {
				continue // one stream
			}
			other := names[(i+1)%len(names)]
			t.Run(fname+"/"+name+"+stderr "+other, func(t *testing.T) {
				out, wantOut := written(readFixture(t, name), f, "stdout")
				errs, wantErr := written(readFixture(t, other), f, "stderr")
				got := runFixture(t, f.parser, [][][]string{out, errs})
				checkRecords(t, "stdout", got["stdout"], wantOut)
				checkRecords(t, "stderr", got["stderr"], wantErr)
			})
		}
	}
}

// runFixture parses the lines written for each stream, one fixture line
// of each stream in turn, with the built-in rules, then flushes; it
// returns the records by stream ("stdout" for raw).
func runFixture(t *testing.T, parser string, streams [][][]string) map[string][]map[string]any {
	t.Helper()
	p, err := NewMultiline(parser, 0, Multiline{Rules: builtins})
	if err != nil {
		t.Fatal(err)
	}
	a := record.NewArena()
	got := map[string][]map[string]any{}
	collect := func(out []*record.Record) {
		for _, r := range out {
			m := recordMap(t, r)
			s, _ := m["stream"].(string)
			if s == "" {
				s = "stdout"
			}
			got[s] = append(got[s], m)
		}
	}
	for i := 0; ; i++ {
		more := false
		for _, s := range streams {
			if i >= len(s) {
				continue
			}
			more = true
			for _, l := range s[i] {
				buf := []byte(l)
				out, err := p.Parse(a, nil, "app.log", buf, tail.Mark{})
				if err != nil {
					t.Fatalf("Parse(%q): %v", l, err)
				}
				collect(out)
				// What is held must not refer to the caller's buffer.
				for k := range buf {
					buf[k] = '#'
				}
			}
		}
		if !more {
			break
		}
	}
	collect(p.Flush(a, nil, "app.log"))
	if h, held := p.Held("app.log"); held {
		t.Errorf("held after Flush: %+v", h)
	}
	return got
}

// recordMap is r's JSON as a map, with its time under "@time" when set.
func recordMap(t *testing.T, r *record.Record) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.AppendJSON(nil), &m); err != nil {
		t.Fatal(err)
	}
	if r.Time() != 0 {
		m["@time"] = r.Time()
	}
	return m
}

func checkRecords(t *testing.T, stream string, got, want []map[string]any) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		var g, w map[string]any
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !reflect.DeepEqual(normal(g), normal(w)) {
			t.Errorf("%s record %d:\n got %v\nwant %v", stream, i, g, w)
			return
		}
	}
}

// normal makes JSON numbers and int64 times comparable.
func normal(m map[string]any) string {
	if m == nil {
		return "<none>"
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Sprint(m)
	}
	return string(b)
}
