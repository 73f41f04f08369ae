package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
)

const (
	fmtMessy = "policy \"p\"\nset .a=1\n"
	fmtClean = "policy \"p\"\n\nset .a = 1\n"
	fmtBad   = "policy \"p\"\nset .a == 1\ndrop if .b\n"
)

// fmtTree makes a directory with a messy, a clean and a non-policy file,
// and a nested directory with another messy file.
// The files are 0640, a mode fmt -w must keep.
func fmtTree(t *testing.T) string {
	files := map[string]string{
		"messy.policy":     fmtMessy,
		"clean.policy":     fmtClean,
		"notes.txt":        "set .a=1",
		"sub/deep.policy":  fmtMessy,
		".hidden/x.policy": fmtMessy,
	}
	dir := writeFiles(t, files)
	for name := range files {
		if err := os.Chmod(filepath.Join(dir, name), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runFmtArgs runs policyrun fmt with args and fmtMessy as its input.
func runFmtArgs(args ...string) (code int, stdout, stderr string) {
	return runWith(fmtMessy, append([]string{"fmt"}, args...)...)
}

func TestFmtPrints(t *testing.T) {
	dir := fmtTree(t)
	code, out, errs := runFmtArgs(filepath.Join(dir, "messy.policy"))
	if code != 0 || out != fmtClean || errs != "" {
		t.Errorf("fmt FILE: code %d, stdout %q, stderr %q", code, out, errs)
	}
	// The file itself is untouched.
	if testfs.Read(t, filepath.Join(dir, "messy.policy")) != fmtMessy {
		t.Errorf("fmt without -w changed the file")
	}
	code, out, _ = runFmtArgs("-")
	if code != 0 || out != fmtClean {
		t.Errorf("fmt -: code %d, stdout %q", code, out)
	}
}

func TestFmtCheck(t *testing.T) {
	dir := fmtTree(t)
	code, out, errs := runFmtArgs("--check", dir)
	want := filepath.Join(dir, "messy.policy") + "\n" + filepath.Join(dir, "sub", "deep.policy") + "\n"
	if code != 1 || out != want || errs != "" {
		t.Errorf("fmt --check DIR: code %d, stdout %q (want %q), stderr %q", code, out, want, errs)
	}
	code, out, _ = runFmtArgs("--check", filepath.Join(dir, "clean.policy"))
	if code != 0 || out != "" {
		t.Errorf("fmt --check clean: code %d, stdout %q", code, out)
	}
}

func TestFmtWrite(t *testing.T) {
	dir := fmtTree(t)
	code, out, errs := runFmtArgs("-w", dir)
	if code != 0 || out != "" || errs != "" {
		t.Fatalf("fmt -w: code %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, name := range []string{"messy.policy", "clean.policy", "sub/deep.policy"} {
		path := filepath.Join(dir, name)
		if b := testfs.Read(t, path); b != fmtClean {
			t.Errorf("%s after -w: %q", name, b)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o640 {
			t.Errorf("%s: mode %v, want 0640 kept", name, info.Mode().Perm())
		}
	}
	if testfs.Read(t, filepath.Join(dir, ".hidden", "x.policy")) != fmtMessy {
		t.Errorf("hidden directory was formatted")
	}
	if testfs.Read(t, filepath.Join(dir, "notes.txt")) != "set .a=1" {
		t.Errorf("non-policy file was touched")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".fmt-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	if code, out, _ := runFmtArgs("--check", dir); code != 0 || out != "" {
		t.Errorf("--check after -w: code %d, %q", code, out)
	}
}

func TestFmtSyntaxErrors(t *testing.T) {
	dir := fmtTree(t)
	bad := filepath.Join(dir, "bad.policy")
	if err := os.WriteFile(bad, []byte(fmtBad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runFmtArgs("-w", dir)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	wantAll(t, "stderr", errs,
		bad+":2:8: error[E0012]: expected '=' after the path in set, found '=='\n",
		bad+":3:6: error[E0013]: expected when after drop, found if\n",
	)
	if out != "" {
		t.Errorf("stdout %q", out)
	}
	// The bad file is left alone, the good ones are still formatted.
	if testfs.Read(t, bad) != fmtBad {
		t.Errorf("file with errors was rewritten")
	}
	if testfs.Read(t, filepath.Join(dir, "messy.policy")) != fmtClean {
		t.Errorf("a syntax error elsewhere stopped the other files")
	}
}

func TestFmtUsageAndIO(t *testing.T) {
	dir := fmtTree(t)
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{nil, 2, "usage: policyrun fmt"},
		{[]string{"--check", "-w", dir}, 2, "either --check or -w"},
		{[]string{"-w", "-"}, 2, "standard input"},
		{[]string{"--bogus", dir}, 2, "flag provided but not defined"},
		{[]string{filepath.Join(dir, "missing.policy")}, 2, "no such file"},
		{[]string{"-h"}, 0, "usage: policyrun fmt"},
	}
	for _, tt := range tests {
		code, _, errs := runFmtArgs(tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.err) {
			t.Errorf("fmt %v: code %d, stderr %q; want %d and %q", tt.args, code, errs, tt.code, tt.err)
		}
	}
}
