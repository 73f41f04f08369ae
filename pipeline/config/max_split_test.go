package config

import (
	"strings"
	"testing"
)

// TestMaxSplit reads a policy filter's max_split, and refuses one that is
// not a positive number or that is given to a Lua script, at its line.
func TestMaxSplit(t *testing.T) {
	const head = "pipeline:\n  inputs:\n    - name: tail\n      path: a.log\n  filters:\n"
	const tail = "  outputs:\n    - name: null\n"
	cfg, err := Parse("p.yaml", []byte(head+"    - name: policy\n      file: a.policy\n      max_split: 50\n    - name: policy\n      file: b.policy\n"+tail))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := cfg.Filters[0].MaxSplit, cfg.Filters[1].MaxSplit; a != 50 || b != 0 {
		t.Errorf("max_split %d and %d, want 50 and 0 (the default)", a, b)
	}
	for _, c := range []struct{ filter, want string }{
		{"    - name: policy\n      file: a.policy\n      max_split: 0\n", "p.yaml:8: max_split must be more than 0"},
		{"    - name: policy\n      file: a.policy\n      max_split: -3\n", "p.yaml:8: max_split must be more than 0"},
		{"    - name: policy\n      file: a.policy\n      max_split: many\n", `p.yaml:8: expected a whole number, found "many"`},
		{"    - name: policy\n      file: a.lua\n      backend: lua_script\n      call: cb\n      max_split: 5\n", "p.yaml:10: max_split is only for a policy"},
		{"    - name: lua\n      script: a.lua\n      call: cb\n      max_split: 5\n", `p.yaml:9: filter lua: unknown key "max_split"`},
	} {
		_, err := Parse("p.yaml", []byte(head+c.filter+tail))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.filter, err, c.want)
		}
	}
}
