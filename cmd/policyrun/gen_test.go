package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/gen"
	"github.com/policyrun/policyrun/record"
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

func TestGenOTLP(t *testing.T) {
	for _, tt := range []struct {
		count int
		reqs  int
	}{{250, 3}, {100, 1}, {1, 1}} {
		code, pb, errs := runWith("", "gen", "otlp", "--count", fmt.Sprint(tt.count))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		// Length-prefixed protobuf requests: tt.reqs of them, tt.count records.
		data, n, reqs := []byte(pb), 0, 0
		for len(data) > 0 {
			l := int(binary.BigEndian.Uint32(data))
			recs, err := record.NewArena().DecodeOTLP(data[4:4+l], record.Owned, nil)
			if err != nil {
				t.Fatal(err)
			}
			n, reqs, data = n+len(recs), reqs+1, data[4+l:]
		}
		if n != tt.count || reqs != tt.reqs {
			t.Errorf("--count %d: %d records in %d requests, want %d", tt.count, n, reqs, tt.reqs)
		}
		// JSON: one request per line, the same records.
		code, js, errs := runWith("", "gen", "otlp", "--count", fmt.Sprint(tt.count), "--encoding", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		lines := strings.Split(strings.TrimSuffix(js, "\n"), "\n")
		m := 0
		for _, l := range lines {
			recs, err := record.NewArena().DecodeOTLPJSON([]byte(l), record.Owned, nil)
			if err != nil {
				t.Fatal(err)
			}
			m += len(recs)
		}
		if m != tt.count || len(lines) != tt.reqs {
			t.Errorf("json --count %d: %d records in %d lines", tt.count, m, len(lines))
		}
		// Deterministic.
		if _, again, _ := runWith("", "gen", "otlp", "--count", fmt.Sprint(tt.count)); again != pb {
			t.Errorf("--count %d: two runs differ", tt.count)
		}
	}
	if code, _, errs := runWith("", "gen", "flat", "--encoding", "json"); code != 2 || !strings.Contains(errs, "only gen otlp") {
		t.Errorf("gen flat --encoding json: exit %d: %s", code, errs)
	}
}
