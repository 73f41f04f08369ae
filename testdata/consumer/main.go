// Command consumer is a program that imports policyrun as any other module
// would: it builds outside the core's module (no replace but the one that
// points at the checkout), imports every public package, and runs one
// policy on each backend. .ci/run builds and runs it.
package main

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/policyrun/policyrun"
	"github.com/policyrun/policyrun/backend"
	_ "github.com/policyrun/policyrun/bench"
	_ "github.com/policyrun/policyrun/bench/report"
	"github.com/policyrun/policyrun/compiler"
	_ "github.com/policyrun/policyrun/compiler/check"
	_ "github.com/policyrun/policyrun/compiler/diag"
	_ "github.com/policyrun/policyrun/compiler/types"
	_ "github.com/policyrun/policyrun/conformance"
	_ "github.com/policyrun/policyrun/lsp"
	_ "github.com/policyrun/policyrun/lua"
	"github.com/policyrun/policyrun/luascript"
	_ "github.com/policyrun/policyrun/pipeline"
	_ "github.com/policyrun/policyrun/pipeline/buffer"
	_ "github.com/policyrun/policyrun/pipeline/checkpoint"
	_ "github.com/policyrun/policyrun/pipeline/config"
	_ "github.com/policyrun/policyrun/pipeline/output"
	_ "github.com/policyrun/policyrun/pipeline/parse"
	_ "github.com/policyrun/policyrun/pipeline/tail"
	_ "github.com/policyrun/policyrun/playground"
	_ "github.com/policyrun/policyrun/playground/web"
	_ "github.com/policyrun/policyrun/policy"
	_ "github.com/policyrun/policyrun/policytest"
	"github.com/policyrun/policyrun/record"
	_ "github.com/policyrun/policyrun/record/coll"
	"github.com/policyrun/policyrun/spec"
	_ "github.com/policyrun/policyrun/state"
	_ "github.com/policyrun/policyrun/vm"
)

const src = `policy "consumer"
schema {
  msg: string
  user: string?
  ...
}
drop when contains(.msg, "/healthz")
set .msg = upper(.msg)
set .at = now()
remove .user
`

const in = `{"msg":"login","user":"ann"}
{"msg":"GET /healthz"}
{"msg":"logout"}
`

const want = `{"msg":"LOGIN","at":"2026-12-05T00:00:00Z"}
{"msg":"LOGOUT","at":"2026-12-05T00:00:00Z"}
`

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run() error {
	clock := spec.FixedClock(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))
	for _, name := range backend.Names() {
		p, err := policyrun.Compile("consumer.policy", []byte(src),
			policyrun.WithBackend(name), policyrun.WithClock(clock))
		if err != nil {
			return err
		}
		out, c, err := p.Process(nil, []byte(in), policyrun.JSON)
		if err != nil {
			return err
		}
		if string(out) != want || c.Dropped != 1 {
			return fmt.Errorf("%s: got %q (%+v), want %q", name, out, c, want)
		}
		fmt.Printf("%s: %d records in, %d out\n", name, c.Runs, c.Out)
	}

	// The packages beneath: a compiled Program over a record of one's own
	// arena, and a Fluent Bit-style Lua filter on the patched gopher-lua
	// (its memory limit is the patch's).
	prog, diags := compiler.CompileFile("consumer.policy", []byte(src), compiler.WithClock(clock))
	if err := diags.Err(); err != nil {
		return err
	}
	a := record.NewArena()
	rec, err := a.DecodeJSON([]byte(`{"msg":"hi","user":"bo"}`), record.Referenced)
	if err != nil {
		return err
	}
	if res := prog.Run(rec); res.Fault != spec.NoFault {
		return fmt.Errorf("vm: %v", res)
	}
	script, err := luascript.LoadLimits("f.lua", []byte(`function f(tag, ts, r) r.seen = true; return 1, ts, r end`),
		"f", luascript.Limits{Time: time.Second, Memory: 64 << 20})
	if err != nil {
		return err
	}
	if got, w := rec.AppendJSON(nil), `{"msg":"HI","at":"2026-12-05T00:00:00Z"}`; !bytes.Equal(got, []byte(w)) {
		return fmt.Errorf("vm: got %s, want %s", got, w)
	}
	rec, err = a.DecodeJSON([]byte(`{"msg":"hi"}`), record.Referenced)
	if err != nil {
		return err
	}
	if _, err := script.Run(rec); err != nil {
		return err
	}
	if got, w := rec.AppendJSON(nil), `{"msg":"hi","seen":true}`; !bytes.Equal(got, []byte(w)) {
		return fmt.Errorf("script: got %s, want %s", got, w)
	}
	fmt.Println("compiler, record, lua script: ok")
	return nil
}
