package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/pipeline/gen"
)

// runGenArgs runs policyrun gen with args.
func runGenArgs(args ...string) (code int, stdout, stderr string) {
	return runWith("", append([]string{"gen"}, args...)...)
}

func TestGenCommand(t *testing.T) {
	want := func(kind string, n int, seed uint64) string {
		var b bytes.Buffer
		if err := gen.Write(&b, kind, n, seed); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{args: []string{"flat", "--count", "5"}, stdout: want("flat", 5, 1)},
		{args: []string{"--count", "3", "--seed", "9", "k8s"}, stdout: want("k8s", 3, 9)},
		{args: []string{"cri", "--count=50", "--seed=2"}, stdout: want("cri", 50, 2)},
		{args: []string{"xml"}, code: 2, stderr: `unknown kind "xml"`},
		{args: []string{}, code: 2, stderr: "usage:"},
		{args: []string{"flat", "extra"}, code: 2, stderr: "unexpected arguments: extra"},
		{args: []string{"flat", "--count", "-1"}, code: 2, stderr: "must not be negative"},
		{args: []string{"flat", "--bogus"}, code: 2, stderr: "bogus"},
		{args: []string{"flat", "-o", filepath.Join(t.TempDir(), "no", "such", "dir")}, code: 2, stderr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runGenArgs(tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, stderr)
			}
			if stdout != tt.stdout {
				t.Errorf("stdout: %d bytes, want %d", len(stdout), len(tt.stdout))
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tt.stderr)
			}
		})
	}
}

func TestGenToFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flat.log")
	if code, _, stderr := runGenArgs("flat", "--count", "1000", "-o", path); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := gen.Write(&want, "flat", 1000, 1); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) || bytes.Count(got, []byte("\n")) != 1000 {
		t.Fatalf("file holds %d bytes, want %d", len(got), want.Len())
	}
}
