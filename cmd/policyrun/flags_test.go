package main

import (
	"bytes"
	"flag"
	"fmt"
	"strings"
	"testing"
)

// TestUsage checks every subcommand's -h (usage on stderr, exit 0) and a
// bad flag (exit 2), as command.run answers them.
func TestUsage(t *testing.T) {
	tests := []struct {
		cmd, usage, flag string
	}{
		{"bench otlp", "usage: policyrun bench otlp", "-gzip"},
		{"bench pipeline", "usage: policyrun bench pipeline", "-runs"},
		{"bench report", "usage: policyrun bench report", "-sections"},
		{"check", "usage: policyrun check", "-format"},
		{"disasm", "usage: policyrun disasm [--param NAME=VALUE]... FILE", "-param"},
		{"eval", "usage: policyrun eval --policy FILE", "-backend"},
		{"fmt", "usage: policyrun fmt", "-check"},
		{"gen", "usage: policyrun gen", "-count"},
		{"lsp", "usage: policyrun lsp", "-stdio"},
		{"playground", "usage: policyrun playground", "-listen"},
		{"replay", "usage: policyrun replay", "-config"},
		{"run", "usage: policyrun run", "-cpuprofile"},
		{"test", "usage: policyrun test", "-backend"},
	}
	for _, tt := range tests {
		args := strings.Fields(tt.cmd)
		code, _, errs := runWith("", append(args, "-h")...)
		if code != 0 || !strings.HasPrefix(errs, tt.usage) || !strings.Contains(errs, tt.flag) {
			t.Errorf("%s -h: exit %d, stderr:\n%s", tt.cmd, code, errs)
		}
		if code, _, _ := runWith("", append(args, "--no-such-flag")...); code != 2 {
			t.Errorf("%s --no-such-flag: exit %d, want 2", tt.cmd, code)
		}
	}
}

// TestCommandLineUsage: policyrun and policyrun bench answer no command
// with their usage and status 2, -h, --help and help with it and 0, and
// a command they do not know by naming it, with 2.
func TestCommandLineUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string // the start of stderr
	}{
		{nil, 2, "usage: policyrun <command>"},
		{[]string{"-h"}, 0, "usage: policyrun <command>"},
		{[]string{"--help"}, 0, "usage: policyrun <command>"},
		{[]string{"help"}, 0, "usage: policyrun <command>"},
		{[]string{"nope"}, 2, "policyrun: unknown command \"nope\"\n\nusage: policyrun <command>"},
		{[]string{"bench", "--help"}, 0, "usage: policyrun bench pipeline"},
		{[]string{"bench", "help"}, 0, "usage: policyrun bench pipeline"},
	}
	for _, tt := range tests {
		code, out, errs := runWith("", tt.args...)
		if code != tt.code || out != "" || !strings.HasPrefix(errs, tt.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant exit %d, stderr from %q", tt.args, code, out, errs, tt.code, tt.want)
		}
	}
}

// TestParseFlagsArgs: parseFlags holds a command to the arguments it
// takes, printing the usage (or, flagsOnly, naming the extra ones) and
// ending with status 2 otherwise; -h ends with 0.
func TestParseFlagsArgs(t *testing.T) {
	tests := []struct {
		args []string
		want nargs
		code int
		ok   bool
		out  string // what it printed; "" for nothing
	}{
		{nil, anyArgs, 0, true, ""},
		{[]string{"a", "b"}, anyArgs, 0, true, ""},
		{nil, someArgs, 2, false, "usage"},
		{[]string{"a", "b"}, someArgs, 0, true, ""},
		{[]string{"a"}, oneArg, 0, true, ""},
		{nil, oneArg, 2, false, "usage"},
		{[]string{"a", "b"}, oneArg, 2, false, "usage"},
		{nil, noArg, 0, true, ""},
		{[]string{"a"}, noArg, 2, false, "usage"},
		{nil, flagsOnly, 0, true, ""},
		{[]string{"-v", "a", "b"}, flagsOnly, 2, false, "policyrun t: unexpected arguments: a b"},
		{[]string{"-h"}, anyArgs, 0, false, "usage"},
		{[]string{"-x"}, anyArgs, 2, false, "flag provided but not defined: -x"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		fl := flag.NewFlagSet("t", flag.ContinueOnError)
		fl.SetOutput(&out)
		fl.Usage = func() { fmt.Fprintln(&out, "usage") }
		fl.Bool("v", false, "")
		code, ok := parseFlags(fl, tt.args, tt.want)
		if code != tt.code || ok != tt.ok || (tt.out == "") != (out.Len() == 0) || !strings.Contains(out.String(), tt.out) {
			t.Errorf("%q, %+v: %d, %v, %q; want %d, %v, %q", tt.args, tt.want, code, ok, out.String(), tt.code, tt.ok, tt.out)
		}
	}
}
