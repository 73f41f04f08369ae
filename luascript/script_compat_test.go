package luascript

import (
	"testing"

	"github.com/policyrun/policyrun/spec"
)

func TestScriptFaultMessages(t *testing.T) {
	lua, bad := spec.Result{Fault: spec.LuaError}, spec.Result{Fault: spec.BadReturn}
	in := `{"a":1}`
	runScriptCases(t, []scriptCase{
		{name: "bad argument", body: "local x = 1\nreturn 2, ts, string.lower(nil)", in: in, want: in, res: lua, msg: "t.lua:3: bad argument #1 to lower (string expected, got nil)", time: -1},
		{name: "index nil", body: "\n\nreturn record.k.x", in: in, want: in, res: lua, msg: "t.lua:4: attempt to index a non-table object(nil) with key 'x'", time: -1},
		{name: "error", body: `error("boom")`, in: in, want: in, res: lua, msg: "t.lua:2: boom", time: -1},
		{name: "error level 0", body: `error("plain", 0)`, in: in, want: in, res: lua, msg: "plain", time: -1},
		{name: "code 7", body: "return 7, ts, record", in: in, want: in, res: bad, msg: "t.lua: cb returned code 7 (want -1, 0, 1 or 2)", time: -1},
		{name: "code 1.5", body: "return 1.5, ts, record", in: in, want: in, res: bad, msg: "returned code 1.5", time: -1},
		{name: "no code", body: "return", in: in, want: in, res: bad, msg: "t.lua: cb returned no code", time: -1},
		{name: "string code", body: `return "2", ts, record`, in: in, want: in, res: bad, msg: "returned a string as its code", time: -1},
		{name: "no record", body: "return 2, ts", in: in, want: in, res: bad, msg: "t.lua: cb returned code 2 and no record", time: -1},
		{name: "string record", body: `return 2, ts, "x"`, in: in, want: in, res: bad, msg: "returned a string as its record", time: -1},
		{name: "function in record", body: "record.f = print; return 2, ts, record", in: in, want: in, res: bad, msg: "returned a record with a function at .f", time: -1},
		{name: "nested function", body: "record.m = {x = {1, print}}; return 2, ts, record", in: in, want: in, res: bad, msg: "with a function at .m.x[2]", time: -1},
		{name: "table key", body: "record[{}] = 1; return 2, ts, record", in: in, want: in, res: bad, msg: "with a key that is a table", time: -1},
		{name: "bad timestamp", body: `return 1, "soon", record`, in: in, want: in, res: bad, msg: "returned code 1 with a timestamp that is neither", time: -1},
		{name: "NaN", body: "record.n = 0/0; return 2, ts, record", in: in, want: in, res: bad, msg: "with a number that is not finite at .n", time: -1},
	}, nil)
}

func TestScriptConversion(t *testing.T) {
	keep := spec.Result{}
	runScriptCases(t, []scriptCase{
		// flb_lua_arraylength: table.maxn decides, holes are null.
		{name: "sparse array", body: "record.s = {[1] = 'a', [3] = 'c'}; return 2, ts, record", want: `{"s":["a",null,"c"]}`, res: keep, time: -1},
		{name: "only a high index", body: "record.s = {[4] = 1}; return 2, ts, record", want: `{"s":[null,null,null,1]}`, res: keep, time: -1},
		{name: "mixed keys are an array", body: "record.s = {1, 2, x = 'y'}; return 2, ts, record", want: `{"s":[1,2]}`, res: keep, time: -1},
		{name: "zero and negative keys are a map", body: "record.s = {[0] = 'z', [-1] = 'm'}; return 2, ts, record", want: `{"s":{"-1":"m","0":"z"}}`, res: keep, time: -1},
		{name: "float key is a map", body: "record.s = {[1.5] = 'x'}; return 2, ts, record", want: `{"s":{"1.5":"x"}}`, res: keep, time: -1},
		{name: "boolean key", body: "record.s = {[true] = 1}; return 2, ts, record", want: `{"s":{"true":1}}`, res: keep, time: -1},
		{name: "empty new table is a map", body: "record.e = {}; return 2, ts, record", want: `{"e":{}}`, res: keep, time: -1},
		{name: "too sparse", body: "record.s = {[1e8] = 1}; return 2, ts, record", want: `{}`, res: spec.Result{Fault: spec.BadReturn}, msg: "an array of over 1048576 elements at .s", time: -1},
		// The record's own arrays and maps keep their kind (metatables).
		{name: "input array emptied", in: `{"a":[1,2],"m":{"k":1}}`, body: "record.a[1] = nil; record.a[2] = nil; record.m.k = nil; return 2, ts, record", want: `{"a":[],"m":{}}`, res: keep, time: -1},
		{name: "input array with a hole", in: `{"a":[1,2,3]}`, body: "record.a[2] = nil; return 2, ts, record", want: `{"a":[1,null,3]}`, res: keep, time: -1},
		{name: "input array with a key", in: `{"a":[1,2]}`, body: "record.a.x = 1; return 2, ts, record", want: `{"a":[1,2]}`, res: keep, time: -1},
		{name: "input map with an index", in: `{"m":{"k":1}}`, body: "record.m[1] = 'one'; return 2, ts, record", want: `{"m":{"k":1,"1":"one"}}`, res: keep, time: -1},
		{name: "moved array", in: `{"a":[]}`, body: "record.b = record.a; record.a = nil; return 2, ts, record", want: `{"b":[]}`, res: keep, time: -1},
		{name: "floats and key order", in: `{"z":1.0,"a":2,"m":{"y":1,"b":2}}`, body: "record.z = 3; record.new = 1; record.m.c = 3; return 2, ts, record", want: `{"z":3.0,"a":2,"m":{"y":1,"b":2,"c":3},"new":1}`, res: keep, time: -1},
		{name: "null in", in: `{"a":null,"b":[1,null,3]}`, body: "record.t = type(record.a) .. #record.b; return 2, ts, record", want: `{"b":[1,null,3],"t":"nil3"}`, res: keep, time: -1},
	}, nil)
}

func TestScriptTypeKeys(t *testing.T) {
	keep := spec.Result{}
	runScriptCases(t, []scriptCase{
		{name: "int keys", in: `{"code":200.0,"n":{"code":1.7},"other":1.5}`, body: "record.status = 404.9; return 2, ts, record",
			want: `{"code":200,"n":{"code":1},"other":1.5,"status":404}`, res: keep, time: -1},
		{name: "int key on a string stays", in: `{"code":"200"}`, body: "return 2, ts, record", want: `{"code":"200"}`, res: keep, time: -1},
		{name: "array keys", body: "record.list = {}; record.ids = {x = 1}; record.nested = {list = {}}; record.other = {}; return 2, ts, record",
			want: `{"ids":[],"list":[],"nested":{"list":[]},"other":{}}`, res: keep, time: -1},
		{name: "not a prefix match", in: `{"cod":1.5,"list2":{}}`, body: "return 2, ts, record", want: `{"cod":1.5,"list2":{}}`, res: keep, time: -1},
	}, func(s *Script) {
		s.TypeIntKeys = []string{"code", "status"}
		s.TypeArrayKeys = []string{"list", "ids"}
	})
}

func TestScriptReturns(t *testing.T) {
	keep := spec.Result{}
	now := testClock.UnixNano()
	runScriptCases(t, []scriptCase{
		{name: "split", in: `{"a":1,"f":1.0}`, body: "return 2, ts, {record, {b = 2, f = 2}, {c = 3}}",
			want: "{\"a\":1,\"f\":1.0}\n{\"f\":2.0,\"b\":2}\n{\"c\":3}", res: keep, time: now},
		{name: "split with a new time", body: "return 1, 10, {{n = 1}, {n = 2}}", want: "{\"n\":1}\n{\"n\":2}", res: keep, time: 10e9},
		{name: "split of one", body: "return 2, ts, {{n = 1}}", want: `{"n":1}`, res: keep, time: now},
		{name: "split with a bad element", in: `{"a":1}`, body: "return 2, ts, {{n = 1}, 'x'}", want: `{"a":1}`,
			res: spec.Result{Fault: spec.BadReturn}, msg: "returned an array whose element 2 is a string, not a record", time: now},
		{name: "split with an array element", in: `{"a":1}`, body: "return 2, ts, {{n = 1}, {1, 2}}", want: `{"a":1}`,
			res: spec.Result{Fault: spec.BadReturn}, msg: "element 2 is an array", time: now},
		{name: "split with a hole", in: `{"a":1}`, body: "return 2, ts, {[1] = {n = 1}, [3] = {n = 3}}", want: `{"a":1}`,
			res: spec.Result{Fault: spec.BadReturn}, msg: "element 2 is a nil", time: now},
		{name: "time as number", body: "return 1, 1.5, record", want: `{}`, res: keep, time: 1_500_000_000},
		{name: "time as table", body: "return 1, {sec = 10, nsec = 5}, record", want: `{}`, res: keep, time: 10_000_000_005},
		{name: "time as table without nsec", body: "return 1, {sec = 10}, record", want: `{}`, res: keep, time: 10_000_000_000},
		{name: "code 2 keeps the time", body: "return 2, 99, record", want: `{}`, res: keep, time: now},
		{name: "code 0 ignores the record", in: `{"a":1}`, body: "record.a = 2; return 0, 5, record", want: `{"a":1}`, res: keep, time: now},
		{name: "drop", body: "return -1, ts, record", res: spec.Result{Action: spec.Drop}, time: now},
		{name: "ts is float seconds", body: "record.ts = ts; return 2, ts, record", want: `{"ts":1796047509.25}`, res: keep, time: now},
	}, nil)
	runScriptCases(t, []scriptCase{
		{name: "time_as_table in", body: "record.sec = ts.sec; record.nsec = ts.nsec; return 2, ts, record", want: `{"nsec":250000000,"sec":1796047509}`, res: keep, time: now},
		{name: "time_as_table out", body: "ts.sec = ts.sec + 1; return 1, ts, record", want: `{}`, res: keep, time: now + 1e9},
	}, func(s *Script) { s.TimeAsTable = true })
}

func TestScriptRunRefusesSplits(t *testing.T) {
	s, err := Load("t.lua", []byte("function cb(tag, ts, record) return 2, ts, {{a = 1}, {b = 2}} end"), "cb")
	if err != nil {
		t.Fatal(err)
	}
	rec := newTestRecord(t, `{"x":1}`)
	res, err := s.Run(rec)
	if res.Fault != spec.BadReturn || err == nil || string(rec.AppendJSON(nil)) != `{"x":1}` {
		t.Errorf("Run of a split: %v, %v, %s", res, err, rec.AppendJSON(nil))
	}
}
