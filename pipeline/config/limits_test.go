package config

import (
	"strings"
	"testing"
	"time"
)

func TestScriptLimits(t *testing.T) {
	cfg, err := Parse("p.yaml", []byte(`
pipeline:
  inputs:
    - name: tail
      path: a.log
  filters:
    - name: lua
      script: f.lua
      call: cb
      time_limit: 250ms
      memory_limit: 8M
    - name: policy
      file: f.lua
      backend: lua_script
      call: cb
      time_limit: 0
      memory_limit: 0
  outputs:
    - name: null
`))
	if err != nil {
		t.Fatal(err)
	}
	if f := cfg.Filters[0]; f.TimeLimit != 250*time.Millisecond || f.MemoryLimit != 8<<20 {
		t.Errorf("filter 0: %v %d", f.TimeLimit, f.MemoryLimit)
	}
	if f := cfg.Filters[1]; f.TimeLimit != 0 || f.MemoryLimit != 0 {
		t.Errorf("filter 1: %v %d, want no limits", f.TimeLimit, f.MemoryLimit)
	}
	_, err = Parse("p.yaml", []byte(`
pipeline:
  inputs:
    - name: tail
      path: a.log
  filters:
    - name: policy
      file: a.policy
      time_limit: 1s
    - name: lua
      script: f.lua
      call: cb
      memory_limit: lots
  outputs:
    - name: null
`))
	for _, want := range []string{
		"p.yaml:9: time_limit and memory_limit are only for backend lua_script",
		`p.yaml:13: expected a size such as 1000, 32k or 5M, found "lots"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors %v lack %q", err, want)
		}
	}
}
