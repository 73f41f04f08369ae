package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
)

// The VS Code extension lives in editors/vscode, beside no Go code: its
// files are held here to the language they describe.
var vscodeDir = filepath.Join("..", "editors", "vscode")

func readJSON(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vscodeDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s is not valid JSON: %v", name, err)
	}
	return v
}

// alternatives returns the words of the group (a|b|c) in a grammar rule's
// match.
func alternatives(t *testing.T, match string) []string {
	t.Helper()
	m := regexp.MustCompile(`\(([a-z_]+(?:\|[a-z_]+)*)\)`).FindStringSubmatch(match)
	if m == nil {
		t.Fatalf("no (a|b|c) group in %q", match)
	}
	return strings.Split(m[1], "|")
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// The grammar's keywords are the lexer's: the reserved words (true, false
// and null scoped as constants) and the contextual keywords, each once.
func TestGrammarKeywords(t *testing.T) {
	g := readJSON(t, "syntaxes/policy.tmLanguage.json")
	if g["scopeName"] != "source.policy" {
		t.Errorf("scopeName %v", g["scopeName"])
	}
	repo, _ := g["repository"].(map[string]any)
	rule := func(name string) map[string]any {
		r, ok := repo[name].(map[string]any)
		if !ok {
			t.Fatalf("the grammar has no rule %s", name)
		}
		return r
	}
	match := func(name string) string {
		s, _ := rule(name)["match"].(string)
		return s
	}
	reserved := append(alternatives(t, match("keywords")), alternatives(t, match("constants"))...)
	if got, want := sorted(reserved), sorted(policy.Keywords()); !slices.Equal(got, want) {
		t.Errorf("the grammar's reserved words %v, the lexer's %v", got, want)
	}
	if got, want := sorted(alternatives(t, match("contextual-keywords"))), sorted(policy.ContextualKeywords()); !slices.Equal(got, want) {
		t.Errorf("the grammar's contextual keywords %v, the lexer's %v", got, want)
	}

	// The schema's type names are the checker's.
	var typeNames []string
	for _, p := range rule("schema-body")["patterns"].([]any) {
		if p, _ := p.(map[string]any); p["name"] == "support.type.policy" {
			typeNames = alternatives(t, p["match"].(string))
		}
	}
	if len(typeNames) == 0 {
		t.Error("the schema has no type names")
	}
	for _, n := range typeNames {
		if types.Basic(n) == nil && n != "array" && n != "map" {
			t.Errorf("the grammar's type %s is none of the language's", n)
		}
	}

	// Every include names a rule of the repository.
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if inc, ok := v["include"].(string); ok {
				if _, ok := repo[strings.TrimPrefix(inc, "#")]; !ok || !strings.HasPrefix(inc, "#") {
					t.Errorf("include %q names no rule", inc)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(g)
}

// The extension's manifest points at files that exist, for .policy files,
// and the extension starts policyrun lsp.
func TestExtensionManifest(t *testing.T) {
	pkg := readJSON(t, "package.json")
	readJSON(t, "language-configuration.json")
	contrib := pkg["contributes"].(map[string]any)
	lang := contrib["languages"].([]any)[0].(map[string]any)
	if lang["id"] != "policy" || !slices.Contains(lang["extensions"].([]any), any(".policy")) {
		t.Errorf("language %v", lang)
	}
	gram := contrib["grammars"].([]any)[0].(map[string]any)
	if gram["language"] != "policy" || gram["scopeName"] != "source.policy" {
		t.Errorf("grammar %v", gram)
	}
	for _, f := range []string{gram["path"].(string), lang["configuration"].(string), pkg["main"].(string), "README.md"} {
		if _, err := os.Stat(filepath.Join(vscodeDir, f)); err != nil {
			t.Errorf("package.json names %s: %v", f, err)
		}
	}
	if _, ok := pkg["dependencies"].(map[string]any)["vscode-languageclient"]; !ok {
		t.Error("the extension does not depend on vscode-languageclient")
	}
	js, err := os.ReadFile(filepath.Join(vscodeDir, "extension.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), "args: ['lsp']") || !strings.Contains(string(js), "vscode-languageclient/node") {
		t.Error("extension.js does not start policyrun lsp with vscode-languageclient")
	}
}
