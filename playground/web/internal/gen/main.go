// Command gen builds the playground's WebAssembly engine and writes it,
// compressed, with the toolchain's wasm_exec.js, into static/, and the
// record of what it was built from into wasm.sum: run by
// go generate ./playground/web (docs/playground.md).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/policyrun/policyrun/playground/web/internal/wasmbuild"
)

func main() {
	if err := gen(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func gen() error {
	dir, err := os.Getwd() // playground/web, as go generate runs it
	if err != nil {
		return err
	}
	root, err := wasmbuild.ModuleRoot(dir)
	if err != nil {
		return err
	}
	bin, sum, err := wasmbuild.Build(root)
	if err != nil {
		return err
	}
	exec, err := wasmbuild.WasmExec(root)
	if err != nil {
		return err
	}
	gz := wasmbuild.Gzip(bin)
	for name, b := range map[string][]byte{
		"static/playground.wasm.gz": gz,
		"static/wasm_exec.js":       exec,
		"wasm.sum":                  []byte(sum.String()),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "gen: playground.wasm %d bytes, %d compressed (%s)\n", len(bin), len(gz), sum.Go)
	return nil
}
