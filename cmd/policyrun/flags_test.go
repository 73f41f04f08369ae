package main

import (
	"strings"
	"testing"
)

// TestUsage checks every subcommand's -h (usage on stderr, exit 0) and a
// bad flag (exit 2).
func TestUsage(t *testing.T) {
	tests := []struct {
		cmd, usage, flag string
	}{
		{"check", "usage: policyrun check", "-format"},
		{"disasm", "usage: policyrun disasm [--param NAME=VALUE]... FILE", "-param"},
		{"eval", "usage: policyrun eval --policy FILE", "-backend"},
		{"fmt", "usage: policyrun fmt", "-check"},
		{"gen", "usage: policyrun gen", "-count"},
		{"run", "usage: policyrun run", "-cpuprofile"},
		{"test", "usage: policyrun test", "-backend"},
	}
	for _, tt := range tests {
		code, _, errs := runWith("", tt.cmd, "-h")
		if code != 0 || !strings.HasPrefix(errs, tt.usage) || !strings.Contains(errs, tt.flag) {
			t.Errorf("%s -h: exit %d, stderr:\n%s", tt.cmd, code, errs)
		}
		if code, _, _ := runWith("", tt.cmd, "--no-such-flag"); code != 2 {
			t.Errorf("%s --no-such-flag: exit %d, want 2", tt.cmd, code)
		}
	}
}
