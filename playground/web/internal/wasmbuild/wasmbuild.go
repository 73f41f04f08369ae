// Package wasmbuild builds the playground's WebAssembly engine
// (playground/wasm) and says which sources it was built from, for the
// generator that commits it (go generate ./playground/web) and the test
// that checks the committed one is up to date.
package wasmbuild

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Main is the package built, relative to the module root.
const Main = "./playground/wasm"

// Flags are go build's flags: no paths, no VCS stamp and no symbols, so
// that the same sources and toolchain give the same bytes.
var Flags = []string{"-trimpath", "-buildvcs=false", "-ldflags=-s -w"}

// Env is the environment of the build and of go list: js/wasm.
func Env() []string {
	return append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=")
}

// ModuleRoot is the directory of the main module's go.mod, from dir.
func ModuleRoot(dir string) (string, error) {
	out, err := goCmd(dir, nil, "env", "GOMOD")
	if err != nil {
		return "", err
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("%s is not in a Go module", dir)
	}
	return filepath.Dir(gomod), nil
}

// GoVersion is the toolchain's version (go1.26.8).
func GoVersion(root string) (string, error) {
	out, err := goCmd(root, nil, "env", "GOVERSION")
	return strings.TrimSpace(string(out)), err
}

// WasmExec is the toolchain's wasm_exec.js, the JavaScript half of a
// js/wasm binary it builds.
func WasmExec(root string) ([]byte, error) {
	out, err := goCmd(root, nil, "env", "GOROOT")
	if err != nil {
		return nil, err
	}
	goroot := strings.TrimSpace(string(out))
	b, err := os.ReadFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"))
	if errors.Is(err, os.ErrNotExist) { // before Go 1.24
		b, err = os.ReadFile(filepath.Join(goroot, "misc", "wasm", "wasm_exec.js"))
	}
	return b, err
}

// Build builds Main in the module at root and returns the binary and the
// record of the build: its toolchain, its sources and its hash.
func Build(root string) ([]byte, Sum, error) {
	version, err := GoVersion(root)
	if err != nil {
		return nil, Sum{}, err
	}
	sources, err := SourceSum(root)
	if err != nil {
		return nil, Sum{}, err
	}
	dir, err := os.MkdirTemp("", "policyrun-wasm")
	if err != nil {
		return nil, Sum{}, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "playground.wasm")
	args := append(append([]string{"build"}, Flags...), "-o", out, Main)
	if _, err := goCmd(root, Env(), args...); err != nil {
		return nil, Sum{}, err
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		return nil, Sum{}, err
	}
	return bin, Sum{Go: version, Sources: sources, Wasm: Hash(bin), Size: len(bin)}, nil
}

// Hash is a binary's SHA-256 in hex, as Sum.Wasm records it.
func Hash(bin []byte) string {
	h := sha256.Sum256(bin)
	return hex.EncodeToString(h[:])
}

// Gzip compresses b at the best level with an empty header: the same b
// gives the same bytes.
func Gzip(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// Gunzip is the inverse of Gzip.
func Gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// SourceSum is the SHA-256 of what Main is built from, for js/wasm: the
// contents of the module's own files (Go, assembly and embedded) of every
// package it imports, the path and version of every other module's
// package, and the build flags. The standard library is left out: the
// toolchain's version is recorded beside it (see Sum), not compared, since
// a binary built by another toolchain still works with its wasm_exec.js.
func SourceSum(root string) (string, error) {
	out, err := goCmd(root, Env(), "list", "-deps", "-json=ImportPath,Dir,Standard,GoFiles,SFiles,EmbedFiles,Module", Main)
	if err != nil {
		return "", err
	}
	type module struct {
		Path, Version, Dir string
		Main               bool
		Replace            *module
	}
	h := sha256.New()
	fmt.Fprintf(h, "flags %q\n", Flags)
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Dir             string
			Standard                    bool
			GoFiles, SFiles, EmbedFiles []string
			Module                      *module
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return "", err
		}
		if p.Standard {
			continue
		}
		m := p.Module
		if m == nil {
			return "", fmt.Errorf("go list: %s has no module", p.ImportPath)
		}
		if m.Replace != nil {
			m = m.Replace
		}
		if m.Version != "" {
			fmt.Fprintf(h, "package %s %s@%s\n", p.ImportPath, m.Path, m.Version)
			continue
		}
		// The main module, or a module replaced by a directory: its files.
		fmt.Fprintf(h, "package %s\n", p.ImportPath)
		files := append(append(append([]string(nil), p.GoFiles...), p.SFiles...), p.EmbedFiles...)
		sort.Strings(files)
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				return "", err
			}
			fs := sha256.Sum256(b)
			fmt.Fprintf(h, "file %s %x\n", filepath.ToSlash(f), fs)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Sum is the record of one build, the file wasm.sum beside the committed
// binary.
type Sum struct {
	Go      string // the toolchain that built it: go1.26.8
	Sources string // SourceSum
	Wasm    string // Hash of the binary (not compressed)
	Size    int    // its size in bytes
}

// String is the file's text.
func (s Sum) String() string {
	return fmt.Sprintf("# Written by go generate ./playground/web: the playground's engine, static/playground.wasm.gz,\n"+
		"# and static/wasm_exec.js were built from these. TestWasmUpToDate compares the sources.\n"+
		"go %s\nsources %s\nwasm %s %d\n", s.Go, s.Sources, s.Wasm, s.Size)
}

// ParseSum reads what String wrote.
func ParseSum(text string) (Sum, error) {
	var s Sum
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch {
		case f[0] == "go" && len(f) == 2:
			s.Go = f[1]
		case f[0] == "sources" && len(f) == 2:
			s.Sources = f[1]
		case f[0] == "wasm" && len(f) == 3:
			s.Wasm = f[1]
			fmt.Sscan(f[2], &s.Size)
		default:
			return Sum{}, fmt.Errorf("wasm.sum: bad line %q", line)
		}
	}
	if s.Go == "" || s.Sources == "" || s.Wasm == "" {
		return Sum{}, errors.New("wasm.sum: incomplete")
	}
	return s, nil
}

func goCmd(dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}
