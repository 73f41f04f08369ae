package config

import (
	"strings"
	"testing"
)

func TestLuaFilterOptions(t *testing.T) {
	tests := []struct {
		name, filter string
		check        func(f Filter) bool
		errs         []string
	}{
		{"defaults", "script: f.lua\n      call: cb", func(f Filter) bool {
			return f.ProtectedMode && !f.TimeAsTable && !f.AllowGetenv && f.Code == "" && f.TypeIntKeys == nil
		}, nil},
		{"every option", "script: f.lua\n      call: cb\n      time_as_table: true\n      type_int_key: status code\n      type_array_key: [list, ids]\n      protected_mode: false\n      allow_getenv: true",
			func(f Filter) bool {
				return !f.ProtectedMode && f.TimeAsTable && f.AllowGetenv &&
					strings.Join(f.TypeIntKeys, ",") == "status,code" && strings.Join(f.TypeArrayKeys, ",") == "list,ids"
			}, nil},
		{"inline code", "code: 'function cb(t, ts, r) return 0, ts, r end'\n      call: cb", func(f Filter) bool {
			return f.File == "" && strings.HasPrefix(f.Code, "function cb") && f.Backend == ScriptBackend
		}, nil},
		{"script and code", "script: f.lua\n      code: x\n      call: cb", nil, []string{"p.yaml:6: filter lua takes script or code, not both"}},
		{"neither", "call: cb", nil, []string{"p.yaml:6: filter lua needs script (the Lua file to run) or code (the script inline)"}},
		{"policy filters take none", "file: p.policy\n      allow_getenv: true", nil, []string{`p.yaml:8: filter policy: unknown key "allow_getenv"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "lua"
			if strings.HasPrefix(tc.filter, "file:") {
				name = "policy"
			}
			src := "pipeline:\n  inputs:\n    - name: tail\n      path: /x/*.log\n  filters:\n    - name: " + name + "\n      " + tc.filter + "\n  outputs:\n    - name: null\n"
			cfg, err := Parse("p.yaml", []byte(src))
			if tc.errs != nil {
				if err == nil {
					t.Fatalf("no error, want %q", tc.errs)
				}
				for _, e := range tc.errs {
					if !strings.Contains(err.Error(), e) {
						t.Errorf("error\n%v\nlacks %q", err, e)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f := cfg.Filters[0]; !tc.check(f) {
				t.Errorf("filter = %+v", f)
			}
		})
	}
}
