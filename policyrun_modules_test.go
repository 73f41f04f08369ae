package policyrun

import (
	"os"
	"testing"

	"github.com/policyrun/policyrun/backend"
)

// An embedder gives the modules a policy imports with WithFiles; both
// backends run the module's function.
func TestCompileWithFiles(t *testing.T) {
	files := map[string][]byte{
		"lib/net.policy": []byte("module \"net\"\n\nfn head(ip: string) string {\n  return split(ip, \".\")[0] ?? ip\n}\n"),
	}
	read := func(path string) ([]byte, error) {
		if b, ok := files[path]; ok {
			return b, nil
		}
		return nil, os.ErrNotExist
	}
	src := []byte("policy \"p\"\n\nimport \"net.policy\"\n\nschema {\n  ip: string\n  ...\n}\n\nset .ip = net.head(.ip)\n")
	for _, b := range backend.Names() {
		p, err := Compile("lib/p.policy", src, WithFiles(read), WithBackend(b))
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		out, _, err := p.Process(nil, []byte(`{"ip":"10.1.2.3"}`+"\n"), JSON)
		if err != nil || string(out) != `{"ip":"10"}`+"\n" {
			t.Errorf("%s: %q, %v", b, out, err)
		}
	}
	if _, err := Compile("p.policy", src, WithFiles(read)); err == nil {
		t.Error("an import WithFiles cannot read compiled")
	}
}
