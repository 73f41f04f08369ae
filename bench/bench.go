// Package bench runs policyrun's benchmarks from outside and measures them:
// B1 as whole processes, the go test benchmarks, and OTLP/HTTP load.
package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// UsageError is an error in what the caller asked (a flag, a file it
// named), as opposed to one of the run: the CLI exits 2 for it, not 1.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Module is the module path that FindRepo looks for.
const Module = "github.com/policyrun/policyrun"

// FindRepo returns the root of the policyrun repository: dir if it is not
// empty (checked), otherwise the first directory from the working
// directory up whose go.mod declares the module.
func FindRepo(dir string) (string, error) {
	isRoot := func(d string) bool {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err != nil {
			return false
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "module" && f[1] == Module {
				return true
			}
		}
		return false
	}
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		if !isRoot(abs) {
			return "", fmt.Errorf("--repo %s: no go.mod of %s there", dir, Module)
		}
		return abs, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if isRoot(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("not inside the policyrun repository (no go.mod of " + Module + " from here up); give --repo")
		}
	}
}

// Host is the machine a benchmark ran on.
type Host struct {
	GoVersion string `json:"go"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	Commit    string `json:"commit,omitempty"`
}

// HostInfo describes the machine and, when git knows it, the commit.
func HostInfo(repo string) Host {
	h := Host{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	if out, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil {
		h.GoVersion = strings.TrimSpace(string(out))
	}
	cmd := exec.Command("git", "rev-parse", "--short=12", "HEAD")
	cmd.Dir = repo
	if out, err := cmd.Output(); err == nil {
		h.Commit = strings.TrimSpace(string(out))
		cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=no")
		cmd.Dir = repo
		if out, err := cmd.Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
			h.Commit += "+dirty"
		}
	}
	return h
}

// A Stat is the summary of repeated measurements: the median and the
// extremes of N values.
type Stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// StatOf summarises xs (the median of an even count is the mean of the
// two middle values). The zero Stat, N 0, stands for no values.
func StatOf(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	m := s[n/2]
	if n%2 == 0 {
		m = (s[n/2-1] + s[n/2]) / 2
	}
	return Stat{Median: m, Min: s[0], Max: s[n-1], N: n}
}

// Scale returns the Stat with every value multiplied by k (k ≥ 0).
func (s Stat) Scale(k float64) Stat {
	return Stat{Median: s.Median * k, Min: s.Min * k, Max: s.Max * k, N: s.N}
}

// tailLines returns the last n lines of b, for error messages.
func tailLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
