// Package web is the playground page: the HTML, CSS and JavaScript of the
// page, the toolchain's wasm_exec.js and the WebAssembly build of package
// playground/wasm (the compiler and the VM), all embedded, served offline
// by Handler. `policyrun playground --listen ADDR` serves it.
//
// The engine is committed, compressed: go generate ./playground/web builds
// it again (docs/playground.md); TestWasmUpToDate fails when the sources
// it is built from changed since.
package web

//go:generate go run ./internal/gen

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/policyrun/policyrun/playground/web/internal/wasmbuild"
)

//go:embed static
var static embed.FS

// Static is the page's files: index.html, playground.css, playground.js,
// wasm_exec.js and playground.wasm.gz.
func Static() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	return sub
}

// Handler serves the page at / and its files beside it. The engine,
// playground.wasm, goes out compressed to a client that accepts gzip (every
// browser) and uncompressed to others.
func Handler() http.Handler {
	files := Static()
	var wasmOnce sync.Once
	var wasm []byte
	var wasmErr error
	mux := http.NewServeMux()
	serve := func(w http.ResponseWriter, r *http.Request, name, contentType string, body []byte) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
	}
	mux.HandleFunc("GET /playground.wasm", func(w http.ResponseWriter, r *http.Request) {
		gz, err := fs.ReadFile(files, "playground.wasm.gz")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			w.Header().Set("Content-Encoding", "gzip")
			serve(w, r, "playground.wasm", "application/wasm", gz)
			return
		}
		wasmOnce.Do(func() { wasm, wasmErr = wasmbuild.Gunzip(gz) })
		if wasmErr != nil {
			http.Error(w, wasmErr.Error(), http.StatusInternalServerError)
			return
		}
		serve(w, r, "playground.wasm", "application/wasm", wasm)
	})
	for name, ct := range map[string]string{
		"index.html":     "text/html; charset=utf-8",
		"playground.css": "text/css; charset=utf-8",
		"playground.js":  "text/javascript; charset=utf-8",
		"wasm_exec.js":   "text/javascript; charset=utf-8",
	} {
		pattern := "GET /" + name
		if name == "index.html" {
			pattern = "GET /{$}"
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			b, err := fs.ReadFile(files, name)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			if name == "index.html" {
				// Everything the page loads is its own: nothing from elsewhere.
				w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:")
			}
			serve(w, r, name, ct, b)
		})
	}
	return mux
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
