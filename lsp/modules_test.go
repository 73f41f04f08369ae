package lsp

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const netModule = "module \"net\"\n\nconst marker = \"[ip]\"\n\nfn mask_ip(ip: string, keep: int = 3) string {\n  return ip\n}\n"

// Across files: completion after an import's name offers the module's
// functions and constants; hover shows a module function's signature
// and a constant's type; definition goes into the module's file. The
// module is read from the open document when the editor has it, else
// from the disk.
func TestModulesAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	modPath := filepath.Join(dir, "lib", "net.policy")
	if err := os.MkdirAll(filepath.Dir(modPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(modPath, []byte(netModule), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &server{w: &writer{w: io.Discard}, docs: map[string]*document{}}
	open := func(name, text string) *document {
		d := newDocument(fileURI(filepath.Join(dir, name)), 1, text)
		d.read = s.readFile
		s.docs[d.uri] = d
		return d
	}
	text := "policy \"p\"\n\nimport \"lib/net.policy\" as n\n\nschema {\n  ip: string\n}\n\nset .ip = n.mask_ip(.ip)\nset .m = n.marker\n"
	d := open("p.policy", text)
	if ds := d.analysis().diags; len(ds) > 0 {
		t.Fatalf("diagnostics: %v", ds)
	}

	cd := open("c.policy", "policy \"c\"\n\nimport \"lib/net.policy\" as n\n\nset .x = n.\n")
	list := s.completion(cd, strings.Index(cd.text, "n.\n")+2).(completionList)
	var labels []string
	for _, it := range list.Items {
		labels = append(labels, it.Label)
	}
	if !slices.Equal(labels, []string{"marker", "mask_ip"}) {
		t.Errorf("completion after n.: %v", labels)
	}

	call := strings.Index(text, "mask_ip") + 2
	h, _ := s.hover(d, call).(hover)
	if !strings.Contains(h.Contents.Value, "fn net.mask_ip(ip: string, keep: int = 3) string") || !strings.Contains(h.Contents.Value, "module net, net.policy:5") {
		t.Errorf("hover on the call: %q", h.Contents.Value)
	}
	if h, _ := s.hover(d, strings.Index(text, "marker")+1).(hover); !strings.Contains(h.Contents.Value, "const net.marker: string") {
		t.Errorf("hover on the constant: %q", h.Contents.Value)
	}
	for at, want := range map[int]Range{
		call:                              {Position{4, 3}, Position{4, 10}},
		strings.Index(text, "marker") + 1: {Position{2, 6}, Position{2, 12}},
	} {
		locs, _ := s.definition(d, at).([]Location)
		if len(locs) != 1 || locs[0].URI != fileURI(modPath) || locs[0].Range != want {
			t.Errorf("definition at %d: %+v, want %s %+v", at, locs, fileURI(modPath), want)
		}
	}

	// On the import: hover lists the module's names, definition opens it.
	imp := strings.Index(text, "lib/net")
	if h, _ := s.hover(d, imp).(hover); !strings.Contains(h.Contents.Value, "module net (imported as n)") ||
		!strings.Contains(h.Contents.Value, "fn net.mask_ip(ip: string, keep: int = 3) string") || !strings.Contains(h.Contents.Value, "const net.marker: string") {
		t.Errorf("hover on the import: %q", h.Contents.Value)
	}
	if locs, _ := s.definition(d, imp).([]Location); len(locs) != 1 || locs[0].URI != fileURI(modPath) || locs[0].Range != (Range{}) {
		t.Errorf("definition on the import: %+v", locs)
	}

	// The module open with an edit: its text, not the disk's, counts;
	// its error shows at the import of the policy.
	open("lib/net.policy", strings.Replace(netModule, "return ip", "return 1", 1))
	d.setText(text)
	ds := d.analysis().diags
	if len(ds) == 0 || ds[0].Code != "E0605" || ds[0].Pos.Line != 3 || !strings.Contains(ds[0].Msg, "net.policy:6:10") {
		t.Errorf("the module's error at the import: %v", ds)
	}
}
