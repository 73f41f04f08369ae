package config

import (
	"strings"
	"testing"
)

// TestParams: a policy filter's params are read as YAML values with their
// lines; their shape is checked here, their types when the stage loads
// the policy.
func TestParams(t *testing.T) {
	src := `
pipeline:
  inputs:
    - name: tail
      path: a.log
  filters:
    - name: policy
      file: p.policy
      params:
        env: prod
        keep: 3
        paths: [/a, /b]
  outputs:
    - name: null
`
	cfg, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ps := cfg.Filters[0].Params
	if ps["env"].Value != "prod" || ps["keep"].Value != 3 || len(ps["paths"].Value.([]any)) != 2 {
		t.Errorf("params = %+v", ps)
	}
	if ps["keep"].Where != "p.yaml line 11" {
		t.Errorf("keep given at %q", ps["keep"].Where)
	}
	for _, tt := range []struct{ name, filter, want string }{
		{"not a map", "      file: p.policy\n      params: [env]\n", "p.yaml:9: params must be a map"},
		{"script", "      file: s.lua\n      backend: lua_script\n      call: cb\n      params: {env: prod}\n", "p.yaml:7: params are only for a policy"},
		{"lua filter", "      script: s.lua\n      call: cb\n      params: {env: prod}\n", `unknown key "params"`},
	} {
		name := "policy"
		if tt.name == "lua filter" {
			name = "lua"
		}
		src := "\npipeline:\n  inputs:\n    - name: tail\n      path: a.log\n  filters:\n    - name: " + name + "\n" + tt.filter + "  outputs:\n    - name: null\n"
		_, err := Parse("p.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}
