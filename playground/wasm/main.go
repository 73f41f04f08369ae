//go:build js && wasm

// Command wasm is the playground's engine in the browser: built with
// GOOS=js GOARCH=wasm (go generate ./playground/web), it sets the global
// function
//
//	policyrunRun(policy, input) → JSON of playground.Result
//
// and stays alive to serve the page's calls. The page waits for the
// global policyrunReady to be true before its first call.
package main

import (
	"encoding/json"
	"syscall/js"

	"github.com/policyrun/policyrun/playground"
)

func main() {
	js.Global().Set("policyrunRun", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 2 || args[0].Type() != js.TypeString || args[1].Type() != js.TypeString {
			return `{"error":"policyrunRun(policy, input) takes two strings"}`
		}
		b, err := json.Marshal(playground.Run(args[0].String(), args[1].String()))
		if err != nil {
			return `{"error":` + quote(err.Error()) + `}`
		}
		return string(b)
	}))
	js.Global().Set("policyrunReady", true)
	select {}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
