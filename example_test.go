package policyrun_test

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/policyrun/policyrun"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

const redact = `policy "redact"

schema {
  msg: string
  user: string?
  ...
}

drop when contains(.msg, "/healthz")
set .msg = upper(.msg)
remove .user
`

// Compile a policy once and process JSON lines with it, from any goroutine.
func Example() {
	p, err := policyrun.Compile("redact.policy", []byte(redact))
	if err != nil {
		panic(err)
	}
	in := []byte(`{"msg":"login","user":"ann"}
{"msg":"GET /healthz"}
not json
`)
	out, c, err := p.Process(nil, in, policyrun.JSON)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	fmt.Printf("runs %d, dropped %d, malformed %d, out %d\n", c.Runs, c.Dropped, c.Malformed, c.Out)
	// Output:
	// {"msg":"LOGIN"}
	// not json
	// runs 2, dropped 1, malformed 1, out 2
}

// A policy with errors gives every diagnostic, each with its position,
// code and hint.
func ExampleCompile_errors() {
	src := []byte(`policy "p"
schema {
  msg: string
  ...
}
set .n = .msg + 1
set .m = lenght(.msg)
`)
	_, err := policyrun.Compile("p.policy", src)
	var perr *policyrun.Error
	if errors.As(err, &perr) {
		for _, d := range perr.List {
			fmt.Printf("%d:%d %s\n", d.Pos.Line, d.Pos.Col, d.Code)
		}
		// The full rendering, with the source line, carets and hints.
		diag.WriteText(os.Stdout, src, perr.List[:1])
	}
	// Output:
	// 6:10 E0303
	// 7:10 E0401
	// error[E0303]: cannot add string and int
	//   --> p.policy:6:10
	//    |
	//  6 | set .n = .msg + 1
	//    |          ^^^^^^^^ .msg is string (declared at line 3)
	//    = help: + does not convert: write the number as a string, "1", to concatenate
}

// The options: the limits of every run, a fixed clock for now(), and the
// backend (the Lua one gives the same results).
func ExampleCompile_options() {
	src := []byte(`policy "stamp"
schema {
  msg: string
  ...
}
set .at = now()
set .msg = .msg + "!"
`)
	p, err := policyrun.Compile("stamp.policy", src,
		policyrun.WithClock(spec.FixedClock(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))),
		policyrun.WithLimits(spec.Limits{MaxString: 8}),
		policyrun.WithBackend("lua"))
	if err != nil {
		panic(err)
	}
	out, c, _ := p.Process(nil, []byte("{\"msg\":\"hi\"}\n{\"msg\":\"much too long\"}\n"), policyrun.JSON)
	fmt.Print(string(out))
	fmt.Println("faults:", c.Faulted(), "string_too_long:", c.Faults[spec.StringTooLong])
	// Output:
	// {"msg":"hi!","at":"2026-12-05T00:00:00Z"}
	// {"msg":"much too long"}
	// faults: 1 string_too_long: 1
}

// A policy's parameters are given when it is compiled, and are constants
// of the compiled policy: one file serves several configurations.
func ExampleWithParams() {
	src := []byte(`policy "env"
param env: string
param skip: array<string> = ["/healthz"]
drop when .path in skip
set .env = env
`)
	for _, env := range []string{"prod", "staging"} {
		p, err := policyrun.Compile("env.policy", src, policyrun.WithParams(spec.Params{"env": {Value: env}}))
		if err != nil {
			panic(err)
		}
		out, _, _ := p.Process(nil, []byte("{\"path\":\"/healthz\"}\n{\"path\":\"/a\"}\n"), policyrun.JSON)
		fmt.Print(string(out))
	}
	_, err := policyrun.Compile("env.policy", src, policyrun.WithParams(spec.Params{"skip": {Value: "/healthz", Where: "flags"}}))
	fmt.Println(err)
	// Output:
	// {"path":"/a","env":"prod"}
	// {"path":"/a","env":"staging"}
	// env.policy:2:7: error[E0610]: parameter env has no value
	// env.policy:3:7: error[E0612]: the value of parameter skip is the string "/healthz", not array<string>
}

// A Batch keeps its memory from call to call: one per goroutine, it
// processes a stream of inputs allocating nothing per record.
func ExampleBatch() {
	p, err := policyrun.Compile("redact.policy", []byte(redact))
	if err != nil {
		panic(err)
	}
	b := p.NewBatch()
	var out []byte
	for _, in := range []string{`{"msg":"a","user":"x"}`, `{"msg":"b"}`} {
		out, _, err = b.Process(out[:0], []byte(in), policyrun.JSON)
		if err != nil {
			panic(err)
		}
		fmt.Print(string(out))
	}
	// Output:
	// {"msg":"A"}
	// {"msg":"B"}
}

// OTLP requests go in and out whole: the kept records, regrouped by
// resource and scope. An OTLP policy reads the OTLP view of each record.
func ExamplePolicy_Process_otlp() {
	src := []byte(`policy "quiet"
schema otlp
drop when .severity_number < 9
set .attributes["seen"] = true
`)
	p, err := policyrun.Compile("quiet.policy", src)
	if err != nil {
		panic(err)
	}
	req := []byte(`{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"api"}}]},` +
		`"scopeLogs":[{"logRecords":[` +
		`{"severityNumber":5,"body":{"stringValue":"debug"}},` +
		`{"severityNumber":17,"body":{"stringValue":"boom"}}]}]}]}`)
	out, c, err := p.Process(nil, req, policyrun.OTLPJSON)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	fmt.Println("dropped", c.Dropped)
	// A request that does not decode is refused whole.
	_, _, err = p.Process(nil, []byte(`{"resourceLogs":[`), policyrun.OTLPJSON)
	fmt.Println(err != nil)
	// Output:
	// {"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"api"}}]},"scopeLogs":[{"logRecords":[{"severityNumber":17,"body":{"stringValue":"boom"},"attributes":[{"key":"seen","value":{"boolValue":true}}]}]}]}]}
	// dropped 1
	// true
}

// Msgpack events, as Fluent Bit's forward protocol carries them, go out in
// the shape they came in.
func ExamplePolicy_Process_msgpack() {
	p, err := policyrun.Compile("redact.policy", []byte(redact))
	if err != nil {
		panic(err)
	}
	// [1733356800, {"msg": "hi", "user": "ann"}]
	in := []byte("\x92\xce\x67\x51\x08\x00\x82\xa3msg\xa2hi\xa4user\xa3ann")
	out, c, err := p.Process(nil, in, policyrun.Msgpack)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q %d\n", out, c.Out)
	// Output:
	// "\x92\xcegQ\b\x00\x81\xa3msg\xa2HI" 1
}

// A policy with split makes one record per element of an array: RunAll
// gives each with its result (Run, which returns one, faults on more).
func ExamplePolicy_RunAll() {
	p, err := policyrun.Compile("split.policy", []byte(`policy "split"
schema {
  items: array<string>
  ...
}
split .items
drop when .items == "skip"
`))
	if err != nil {
		panic(err)
	}
	rec, err := record.NewArena().DecodeJSON([]byte(`{"id":7,"items":["a","skip","b"]}`), record.Owned)
	if err != nil {
		panic(err)
	}
	pieces, err := p.RunAll(rec, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("splits:", p.Splits())
	for _, pc := range pieces {
		fmt.Printf("%s %s\n", pc.Result, pc.Rec.AppendJSON(nil))
	}
	// Output:
	// splits: true
	// keep {"id":7,"items":"a"}
	// drop {"id":7,"items":"skip"}
	// keep {"id":7,"items":"b"}
}
