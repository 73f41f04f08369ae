package parse

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/record"
)

func TestParsers(t *testing.T) {
	ts := time.Date(2026, 11, 29, 21, 0, 0, 123456789, time.UTC).UnixNano()
	tests := []struct {
		parser  string
		lines   []string // fed in order, one source
		want    []string // JSON of each emitted record, in order
		time    []int64  // the record's time, when nonzero
		errs    int      // lines that did not parse
		pending bool     // something held back at the end
	}{
		{parser: "raw", lines: []string{`hello "world"`, ``}, want: []string{`{"log":"hello \"world\""}`, `{"log":""}`}},
		{parser: "json", lines: []string{`{"a":1,"b":[true,null]}`}, want: []string{`{"a":1,"b":[true,null]}`}},
		{parser: "json", lines: []string{`{"a":1`}, want: []string{`{"log":"{\"a\":1","parse_error":`}, errs: 1},
		{parser: "json", lines: []string{`[1,2]`}, want: []string{`{"log":"[1,2]","parse_error":`}, errs: 1},
		{
			parser: "docker",
			lines:  []string{`{"log":"hi\n","stream":"stderr","time":"2026-11-29T21:00:00.123456789Z"}`},
			want:   []string{`{"log":"hi\n","stream":"stderr"}`},
			time:   []int64{ts},
		},
		{parser: "docker", lines: []string{`{"log":"hi\n","time":"yesterday"}`}, want: []string{`{"log":"hi\n","time":"yesterday"}`}},
		{parser: "docker", lines: []string{`{"log":1}`, `{"stream":"stdout"}`}, want: []string{`{"log":1}`, `{"stream":"stdout"}`}},
		{
			// Docker splits a long line into entries whose log does not
			// end in a newline: they are joined, with the first one's time.
			parser: "docker",
			lines: []string{
				`{"log":"part one, ","stream":"stdout","time":"2026-11-29T21:00:00.123456789Z"}`,
				`{"log":"part two, ","stream":"stdout","time":"2026-11-29T21:00:01Z"}`,
				`{"log":"end\n","stream":"stdout","time":"2026-11-29T21:00:02Z"}`,
			},
			want: []string{`{"log":"part one, part two, end\n","stream":"stdout"}`},
			time: []int64{ts},
		},
		{
			parser:  "docker",
			lines:   []string{`{"log":"held","stream":"stdout","time":"2026-11-29T21:00:00Z"}`},
			pending: true,
		},
		{
			parser: "cri",
			lines:  []string{`2026-11-29T21:00:00.123456789Z stdout F hello world`},
			want:   []string{`{"stream":"stdout","logtag":"F","log":"hello world"}`},
			time:   []int64{ts},
		},
		{
			parser: "cri",
			lines:  []string{`2026-11-29T21:00:00.123456789Z stderr F`},
			want:   []string{`{"stream":"stderr","logtag":"F","log":""}`},
		},
		{
			parser: "cri",
			lines: []string{
				`2026-11-29T21:00:00.123456789Z stdout P part one, `,
				`2026-11-29T21:00:01Z stdout P part two, `,
				`2026-11-29T21:00:02Z stdout F end`,
			},
			want: []string{`{"stream":"stdout","logtag":"F","log":"part one, part two, end"}`},
			time: []int64{ts},
		},
		{
			parser:  "cri",
			lines:   []string{`2026-11-29T21:00:00Z stdout P held`},
			pending: true,
		},
		{
			parser: "cri",
			lines:  []string{`not cri`, `2026-11-29T21:00:00Z stdin F x`, `yesterday stdout F x`, `2026-11-29T21:00:00Z stdout X x`},
			want: []string{
				`{"log":"not cri","parse_error":`,
				`{"log":"2026-11-29T21:00:00Z stdin F x","parse_error":`,
				`{"log":"yesterday stdout F x","parse_error":`,
				`{"log":"2026-11-29T21:00:00Z stdout X x","parse_error":`,
			},
			errs: 4,
		},
		{
			parser: "logfmt",
			lines:  []string{`level=info msg="hello \"there\"" user=bob empty= bare`},
			want:   []string{`{"level":"info","msg":"hello \"there\"","user":"bob","empty":"","bare":""}`},
		},
		{parser: "logfmt", lines: []string{`a=1 a=2`}, want: []string{`{"a":"2"}`}},
		{parser: "logfmt", lines: []string{`msg="open`}, want: []string{`{"log":"msg=\"open","parse_error":"logfmt: unterminated quoted value"}`}, errs: 1},
		{parser: "logfmt", lines: []string{`=x`}, want: []string{`{"log":"=x","parse_error":"logfmt: empty key"}`}, errs: 1},
		{parser: "logfmt", lines: []string{`   `}, want: []string{`{"log":"   ","parse_error":"logfmt: no key=value pairs"}`}, errs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.parser+"/"+tt.lines[0], func(t *testing.T) {
			p, err := New(tt.parser)
			if err != nil {
				t.Fatal(err)
			}
			a := record.NewArena()
			var got []*record.Record
			errs := 0
			for _, l := range tt.lines {
				buf := []byte(l)
				n := len(got)
				var err error
				got, err = p.Parse(a, got, "f", buf, tail.Mark{})
				if err != nil {
					errs++
				}
				// Held-back parts must not keep references into the
				// caller's buffer: the F line comes in a later batch.
				if len(got) == n {
					for i := range buf {
						buf[i] = '#'
					}
				}
			}
			if errs != tt.errs {
				t.Errorf("errors = %d, want %d", errs, tt.errs)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d records, want %d", len(got), len(tt.want))
			}
			for i, r := range got {
				js := string(r.AppendJSON(nil))
				if !strings.HasPrefix(js, tt.want[i]) {
					t.Errorf("record %d = %s, want %s", i, js, tt.want[i])
				}
				if i < len(tt.time) && tt.time[i] != 0 && r.Time() != tt.time[i] {
					t.Errorf("record %d time = %d, want %d", i, r.Time(), tt.time[i])
				}
			}
			if _, held := p.Held("f"); held != tt.pending {
				t.Errorf("Held = %v, want %v", held, tt.pending)
			}
			if tt.pending {
				flushed := p.Flush(a, nil, "f")
				if _, held := p.Held("f"); len(flushed) != 1 || held {
					t.Fatal("Flush did not emit the held line")
				}
				if js := string(flushed[0].AppendJSON(nil)); tt.parser == "cri" && !strings.Contains(js, `"logtag":"P"`) {
					t.Errorf("flushed = %s, want logtag P", js)
				}
			}
		})
	}
}

func TestCRISourcesAreSeparate(t *testing.T) {
	p, err := New("cri")
	if err != nil {
		t.Fatal(err)
	}
	a := record.NewArena()
	parse := func(source, line string) *record.Record {
		t.Helper()
		out, err := p.Parse(a, nil, source, []byte(line), tail.Mark{})
		if err != nil || len(out) > 1 {
			t.Fatalf("%s: %d records, %v", line, len(out), err)
		}
		if len(out) == 0 {
			return nil
		}
		return out[0]
	}
	if r := parse("a", "2026-11-29T21:00:00Z stdout P a1 "); r != nil {
		t.Fatal("partial line emitted")
	}
	r := parse("b", "2026-11-29T21:00:00Z stdout F b1")
	if js := string(r.AppendJSON(nil)); !strings.Contains(js, `"log":"b1"`) {
		t.Errorf("source b = %s", js)
	}
	r = parse("a", "2026-11-29T21:00:00Z stdout F a2")
	if js := string(r.AppendJSON(nil)); !strings.Contains(js, `"log":"a1 a2"`) {
		t.Errorf("source a = %s", js)
	}
}

func TestUnknownParser(t *testing.T) {
	if _, err := New("xml"); err == nil || !strings.Contains(err.Error(), "known: json, cri") {
		t.Errorf("err = %v", err)
	}
}

// FuzzParse feeds any line to every parser, and to those that take them
// with the built-in multiline rules: no panic, and every line yields a
// record (now or at Flush) or is accounted as held back.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, `{"log":"x","time":"2026-11-29T21:00:00Z"}`, `{"log":"x\n","stream":"stderr"}`, `2026-11-29T21:00:00Z stdout P x`,
		`2026-11-29T21:00:00Z stdout F`, `a=1 b="x\"y" c`, `msg="`, "\xff\xfe", ``,
		`{"log":"java.lang.Error: x\n","stream":"stdout"}`, `2026-11-29T21:00:00Z stderr F panic: x`, `Traceback (most recent call last):`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		names := append(slices.Clone(Names), MultilineParsers...)
		for i, name := range names {
			p, err := New(name)
			if i >= len(Names) {
				name += " multiline"
				p, err = NewMultiline(names[i], 0, Multiline{Rules: builtins})
			}
			if err != nil {
				t.Fatal(err)
			}
			a := record.NewArena()
			out, err := p.Parse(a, nil, "s", line, tail.Mark{})
			_, held := p.Held("s")
			if len(out) == 0 && err == nil && !held {
				t.Fatalf("%s: line neither emitted nor held", name)
			}
			if len(out) == 0 && len(p.Flush(a, nil, "s")) == 0 {
				t.Fatalf("%s: held line lost at Flush", name)
			}
			for _, r := range out {
				_ = r.AppendJSON(nil)
			}
		}
	})
}

// TestCRIStreams checks that stdout and stderr parts, which the runtime
// interleaves in one file, are joined each with its own stream, and that a
// join is bounded: a container that never ends its line is emitted in parts.
func TestCRIStreams(t *testing.T) {
	tests := []struct {
		name      string
		parser    string // cri when empty
		maxJoined int
		lines     []string
		want      []string
		flushed   []string
	}{
		{
			name: "interleaved",
			lines: []string{
				`2026-11-29T21:00:00Z stdout P out-a-`,
				`2026-11-29T21:00:00Z stderr P err-a-`,
				`2026-11-29T21:00:00Z stderr F err-b`,
				`2026-11-29T21:00:00Z stdout F out-b`,
			},
			want: []string{
				`{"stream":"stderr","logtag":"F","log":"err-a-err-b"}`,
				`{"stream":"stdout","logtag":"F","log":"out-a-out-b"}`,
			},
		},
		{
			name: "held at flush",
			lines: []string{
				`2026-11-29T21:00:00Z stderr P e`,
				`2026-11-29T21:00:00Z stdout P o`,
			},
			flushed: []string{
				`{"stream":"stdout","logtag":"P","log":"o"}`,
				`{"stream":"stderr","logtag":"P","log":"e"}`,
			},
		},
		{
			name:      "bounded",
			maxJoined: 8,
			lines: []string{
				`2026-11-29T21:00:00Z stdout P 1234`,
				`2026-11-29T21:00:00Z stdout P 5678`,
				`2026-11-29T21:00:00Z stdout P 9abc`,
				`2026-11-29T21:00:00Z stdout F d`,
			},
			want: []string{
				`{"stream":"stdout","logtag":"P","log":"12345678"}`,
				`{"stream":"stdout","logtag":"F","log":"9abcd"}`,
			},
		},
		// The docker parser joins partial entries (a log without a final
		// newline) the same way.
		{
			name:   "docker interleaved",
			parser: "docker",
			lines: []string{
				`{"log":"out-a-","stream":"stdout"}`,
				`{"log":"err-a-","stream":"stderr"}`,
				`not json`,
				`{"log":"err-b\n","stream":"stderr"}`,
				`{"log":"out-b\n","stream":"stdout"}`,
			},
			want: []string{
				`{"log":"not json","parse_error":"record: record is not a map at byte 0: a JSON line must be an object"}`,
				`{"log":"err-a-err-b\n","stream":"stderr"}`,
				`{"log":"out-a-out-b\n","stream":"stdout"}`,
			},
		},
		{
			name:   "docker held at flush",
			parser: "docker",
			lines: []string{
				`{"log":"e","stream":"stderr"}`,
				`{"log":"o","stream":"stdout","attrs":{"k":"v"}}`,
				`{"log":"o2","stream":"stdout"}`,
			},
			flushed: []string{
				`{"log":"oo2","stream":"stdout","attrs":{"k":"v"}}`,
				`{"log":"e","stream":"stderr"}`,
			},
		},
		{
			name:      "docker bounded",
			parser:    "docker",
			maxJoined: 8,
			lines: []string{
				`{"log":"1234","stream":"stdout"}`,
				`{"log":"5678","stream":"stdout"}`,
				`{"log":"9abc","stream":"stdout"}`,
				`{"log":"d\n","stream":"stdout"}`,
			},
			want: []string{
				`{"log":"12345678","stream":"stdout"}`,
				`{"log":"9abcd\n","stream":"stdout"}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.parser == "" {
				tt.parser = "cri"
			}
			p, err := NewSized(tt.parser, tt.maxJoined)
			if err != nil {
				t.Fatal(err)
			}
			a := record.NewArena()
			var got, flushed []string
			for _, l := range tt.lines {
				out, err := p.Parse(a, nil, "f", []byte(l), tail.Mark{})
				if err != nil && l != "not json" {
					t.Fatalf("Parse(%q): %v", l, err)
				}
				for _, r := range out {
					got = append(got, string(r.AppendJSON(nil)))
				}
			}
			if _, held := p.Held("f"); held != (len(tt.flushed) > 0) {
				t.Errorf("Held = %v", held)
			}
			for _, r := range p.Flush(a, nil, "f") {
				flushed = append(flushed, string(r.AppendJSON(nil)))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if strings.Join(flushed, "\n") != strings.Join(tt.flushed, "\n") {
				t.Errorf("flushed:\n%s\nwant:\n%s", strings.Join(flushed, "\n"), strings.Join(tt.flushed, "\n"))
			}
		})
	}
}
