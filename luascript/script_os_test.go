package luascript

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// scriptCase runs body, the inside of cb(tag, ts, record), over in.
type scriptCase struct {
	name, body, in string
	want           string // the record(s) after the run, JSON lines joined by "\n"
	res            spec.Result
	msg            string // a substring of the fault's message
	time           int64  // the record's time after the run (-1: not checked)
}

// testClock is 2026-11-30 14:05:09.25 UTC, a Monday.
var testClock = time.Date(2026, 11, 30, 14, 5, 9, 250_000_000, time.UTC)

func runScriptCases(t *testing.T, cases []scriptCase, setup func(*Script)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := "function cb(tag, ts, record)\n" + tc.body + "\nend\n"
			s, err := Load("t.lua", []byte(src), "cb")
			if err != nil {
				t.Fatal(err)
			}
			s.Clock = spec.FixedClock(testClock)
			s.Location = time.FixedZone("CET", 3600)
			if setup != nil {
				setup(s)
			}
			a := record.NewArena()
			in := tc.in
			if in == "" {
				in = "{}"
			}
			rec, err := a.DecodeJSON([]byte(in), record.Owned)
			if err != nil {
				t.Fatal(err)
			}
			rec.SetTag([]byte("app.log"))
			rec.SetTime(testClock.UnixNano())
			rec.Commit()
			res, extra, err := s.RunSplit(rec)
			if res != tc.res {
				t.Fatalf("result %v, want %v (err %v)", res, tc.res, err)
			}
			if res.Faulted() {
				fe, ok := err.(*FaultError)
				if !ok || fe.Reason != res.Fault || !strings.Contains(fe.Msg, tc.msg) {
					t.Fatalf("error %#v, want a FaultError with %q", err, tc.msg)
				}
			} else if err != nil {
				t.Fatalf("error %v with result %v", err, res)
			}
			if res.Action == spec.Drop {
				return
			}
			var got []string
			for _, r := range append([]*record.Record{rec}, extra...) {
				got = append(got, string(r.AppendJSON(nil)))
			}
			if g := strings.Join(got, "\n"); g != tc.want {
				t.Errorf("got\n%s\nwant\n%s", g, tc.want)
			}
			if tc.time >= 0 && rec.Time() != tc.time {
				t.Errorf("time %d, want %d", rec.Time(), tc.time)
			}
		})
	}
}

func TestScriptOS(t *testing.T) {
	now := testClock.UnixNano()
	set := func(exprs string) string {
		return "record.v = " + exprs + "\nreturn 2, ts, record"
	}
	runScriptCases(t, []scriptCase{
		{name: "time now", body: set("os.time()"), want: `{"v":1796047509}`, time: now},
		{name: "time table", body: set("os.time({year=2026, month=11, day=30, hour=15, min=5, sec=9})"), want: `{"v":1796047509}`, time: now},
		{name: "time table default hour 12", body: set("os.time({year=2026, month=11, day=30})"), want: `{"v":1796036400}`, time: now},
		{name: "time table normalised", body: set("os.time({year=2026, month=12, day=0, hour=15, min=65, sec=9})"), want: `{"v":1796051109}`, time: now},
		{name: "time table string fields", body: set(`os.time({year="2026", month="11", day="30", hour=15, min=5, sec=9})`), want: `{"v":1796047509}`, time: now},
		{name: "time table missing day", body: set("os.time({year=2026, month=11})"), res: spec.Result{Fault: spec.LuaError}, want: `{}`, msg: "field 'day' missing in date table", time: now},
		{name: "time not a table", body: set("os.time(5)"), res: spec.Result{Fault: spec.LuaError}, want: `{}`, msg: "t.lua:2: bad argument #1 to time (table expected, got number)", time: now},
		{name: "date default", body: set("os.date()"), want: `{"v":"Mon Nov 30 15:05:09 2026"}`, time: now},
		{name: "date utc", body: set(`os.date("!%Y-%m-%dT%H:%M:%SZ")`), want: `{"v":"2026-11-30T14:05:09Z"}`, time: now},
		{name: "date of a time", body: set(`os.date("!%c", 0)`), want: `{"v":"Thu Jan  1 00:00:00 1970"}`, time: now},
		{name: "date of a float time", body: set(`os.date("!%H:%M:%S", 86399.9)`), want: `{"v":"23:59:59"}`, time: now},
		{name: "date every format", body: set(`os.date("%a|%A|%b|%B|%C|%d|%D|%e|%F|%g|%G|%h|%H|%I|%j|%k|%l|%m|%M|%n|%p|%P|%r|%R|%s|%S|%t|%T|%u|%U|%V|%w|%W|%x|%X|%y|%Y|%z|%Z|%%|%Ey|%Od|%Q")`),
			want: `{"v":"Mon|Monday|Nov|November|20|30|11/30/26|30|2026-11-30|26|2026|Nov|15|03|334|15| 3|11|05|\n|PM|pm|03:05:09 PM|15:05|1796047509|09|\t|15:05:09|1|48|49|1|48|11/30/26|15:05:09|26|2026|+0100|CET|%|26|30|%Q"}`, time: now},
		{name: "date weeks at the year's start", body: set(`os.date("!%U %W %V %G %j %u %w", os.time({year=2027, month=1, day=1, hour=13}))`), want: `{"v":"00 00 53 2026 001 5 5"}`, time: now},
		{name: "date *t", body: `local d = os.date("*t"); record.d = d; return 2, ts, record`,
			want: `{"d":{"day":30,"hour":15,"isdst":false,"min":5,"month":11,"sec":9,"wday":2,"yday":334,"year":2026}}`, time: now},
		{name: "date !*t round trip", body: `local d = os.date("!*t", 1000000000); record.d = d.year .. "-" .. d.month .. "-" .. d.day .. " " .. d.hour; return 2, ts, record`,
			want: `{"d":"2001-9-9 1"}`, time: now},
		{name: "clock", body: set(`type(os.clock()) == "number" and os.clock() >= 0`), want: `{"v":true}`, time: now},
		{name: "difftime", body: set(`os.difftime(os.time() + 90, os.time())`), want: `{"v":90}`, time: now},
		{name: "difftime one argument", body: set(`os.difftime(5)`), want: `{"v":5}`, time: now},
		{name: "getenv disabled", body: set(`os.getenv("HOME")`), res: spec.Result{Fault: spec.LuaError}, want: `{}`, msg: "os.getenv is disabled", time: now},
		{name: "host functions absent", body: set(`table.concat({type(os.execute), type(os.exit), type(os.remove), type(os.rename), type(os.tmpname), type(os.setlocale), type(io), type(require), type(dofile), type(loadfile), type(package), type(debug), type(load), type(loadstring)}, ",")`),
			want: `{"v":"nil,nil,nil,nil,nil,nil,nil,nil,nil,nil,nil,nil,nil,nil"}`, time: now},
		{name: "gsub of a number", body: set(`type(string.gsub(123, "x", "y")) .. " " .. string.gsub(123, "2", "x") .. " " .. select(2, string.gsub(1.5, "%.", ","))`), want: `{"v":"string 1x3 1"}`, time: now},
		{name: "gsub of a string", body: set(`(string.gsub("a-b", "-", "+"))`), want: `{"v":"a+b"}`, time: now},
	}, nil)
}

func TestScriptGetenvAllowed(t *testing.T) {
	os.Setenv("POLICYRUN_TEST_GETENV", "on")
	defer os.Unsetenv("POLICYRUN_TEST_GETENV")
	runScriptCases(t, []scriptCase{
		{name: "set", body: `record.v = os.getenv("POLICYRUN_TEST_GETENV"); record.w = os.getenv("POLICYRUN_TEST_UNSET") == nil; return 2, ts, record`,
			want: `{"v":"on","w":true}`, time: -1},
	}, func(s *Script) { s.AllowGetenv = true })
}

func TestScriptPrint(t *testing.T) {
	var buf bytes.Buffer
	src := "function cb(tag, ts, record)\n  print(\"tag\", tag, 1.5, nil, true)\n  print(\"two\\nlines\")\n  print()\n  return 0, ts, record\nend\n"
	s, err := Load("dir/p.lua", []byte(src), "cb")
	if err != nil {
		t.Fatal(err)
	}
	s.Stderr = &buf
	a := record.NewArena()
	rec, _ := a.DecodeJSON([]byte(`{"a":1}`), record.Owned)
	rec.SetTag([]byte("app"))
	if res, err := s.Run(rec); err != nil || res != (spec.Result{}) {
		t.Fatal(res, err)
	}
	want := "dir/p.lua: tag\tapp\t1.5\tnil\ttrue\ndir/p.lua: two\ndir/p.lua: lines\ndir/p.lua: \n"
	if buf.String() != want {
		t.Errorf("print wrote %q, want %q", buf.String(), want)
	}
	buf.Reset()
	s.PrintPrefix = "filter lua.3"
	s.Run(rec)
	if !strings.HasPrefix(buf.String(), "filter lua.3: tag\t") {
		t.Errorf("with a prefix, print wrote %q", buf.String())
	}
}

func newTestRecord(t *testing.T, in string) *record.Record {
	t.Helper()
	rec, err := record.NewArena().DecodeJSON([]byte(in), record.Owned)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
