package web

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/playground/web/internal/wasmbuild"
)

func readSum(t *testing.T) wasmbuild.Sum {
	t.Helper()
	text, err := os.ReadFile("wasm.sum")
	if err != nil {
		t.Fatal(err)
	}
	s, err := wasmbuild.ParseSum(string(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWasmUpToDate: the committed engine was built from the sources of
// today. When it fails, run go generate ./playground/web and commit
// playground/web/static and playground/web/wasm.sum.
func TestWasmUpToDate(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the engine's sources")
	}
	root, err := wasmbuild.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := wasmbuild.SourceSum(root)
	if err != nil {
		t.Fatal(err)
	}
	if s := readSum(t); got != s.Sources {
		t.Fatalf("playground/web/static/playground.wasm.gz is stale: its sources changed since it was built "+
			"(sum %s, now %s); run go generate ./playground/web and commit playground/web", s.Sources, got)
	}
}

// TestEmbeddedWasm: the embedded engine is the binary wasm.sum describes,
// and wasm_exec.js is its toolchain's, when that is the toolchain here.
func TestEmbeddedWasm(t *testing.T) {
	s := readSum(t)
	gz, err := fs.ReadFile(Static(), "playground.wasm.gz")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := wasmbuild.Gunzip(gz)
	if err != nil {
		t.Fatal(err)
	}
	if h := wasmbuild.Hash(bin); h != s.Wasm || len(bin) != s.Size {
		t.Errorf("playground.wasm.gz holds %d bytes, sha256 %s; wasm.sum says %d, %s", len(bin), h, s.Size, s.Wasm)
	}
	if !bytes.HasPrefix(bin, []byte("\x00asm")) {
		t.Errorf("playground.wasm is not WebAssembly: % x", bin[:min(8, len(bin))])
	}
	if _, err := exec.LookPath("go"); err != nil {
		return
	}
	root, err := wasmbuild.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := wasmbuild.GoVersion(root); err != nil || v != s.Go {
		t.Logf("the toolchain is %s, the engine was built by %s: wasm_exec.js not compared", v, s.Go)
		return
	}
	want, err := wasmbuild.WasmExec(root)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := fs.ReadFile(Static(), "wasm_exec.js")
	if !bytes.Equal(got, want) {
		t.Errorf("static/wasm_exec.js is not the one of %s; run go generate ./playground/web", s.Go)
	}
}

func get(t *testing.T, h http.Handler, path string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

func TestHandler(t *testing.T) {
	h := Handler()
	for _, c := range []struct{ path, ctype, has string }{
		{"/", "text/html", `<textarea id="policy"`},
		{"/playground.js", "text/javascript", "policyrunRun"},
		{"/playground.css", "text/css", "#diagnostics"},
		{"/wasm_exec.js", "text/javascript", "globalThis.Go = class"},
	} {
		resp := get(t, h, c.path)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), c.ctype) || !strings.Contains(string(body), c.has) {
			t.Errorf("GET %s: %d %s, has %q: %v", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), c.has, strings.Contains(string(body), c.has))
		}
	}
	if csp := get(t, h, "/").Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("the page's CSP is %q", csp)
	}
	for _, path := range []string{"/nope", "/playground.wasm.gz", "/index.html/x"} {
		if resp := get(t, h, path); resp.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}

	gz, _ := fs.ReadFile(Static(), "playground.wasm.gz")
	bin, _ := wasmbuild.Gunzip(gz)
	resp := get(t, h, "/playground.wasm", "Accept-Encoding", "gzip, deflate, br")
	body, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Content-Type") != "application/wasm" || !bytes.Equal(body, gz) {
		t.Errorf("GET /playground.wasm, gzip accepted: %v, %d bytes", resp.Header, len(body))
	}
	for _, accept := range []string{"", "gzip;q=0", "br"} {
		resp = get(t, h, "/playground.wasm", "Accept-Encoding", accept)
		body, _ = io.ReadAll(resp.Body)
		if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, bin) {
			t.Errorf("GET /playground.wasm, Accept-Encoding %q: %v, %d bytes", accept, resp.Header, len(body))
		}
	}
}
