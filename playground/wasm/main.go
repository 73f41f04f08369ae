//go:build js && wasm

// Command wasm is the playground's engine in the browser: built with
// GOOS=js GOARCH=wasm (go generate ./playground/web), it sets the global
// function
//
//	policyrunRun(policy, input[, modules, params]) → JSON of playground.Result
//
// modules is a JSON object of module files by name (the page's module
// tab), params the parameters' values, one name=value a line.
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
		if len(args) != 2 && len(args) != 4 {
			return `{"error":"policyrunRun(policy, input[, modules, params]) takes two or four strings"}`
		}
		for _, a := range args {
			if a.Type() != js.TypeString {
				return `{"error":"policyrunRun(policy, input[, modules, params]) takes two or four strings"}`
			}
		}
		var modules map[string]string
		params := ""
		if len(args) == 4 {
			if m := args[2].String(); m != "" {
				if err := json.Unmarshal([]byte(m), &modules); err != nil {
					return `{"error":` + quote("modules: "+err.Error()) + `}`
				}
			}
			params = args[3].String()
		}
		b, err := json.Marshal(playground.RunFiles(args[0].String(), args[1].String(), modules, params))
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
