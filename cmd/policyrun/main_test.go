package main

import (
	"os"
	"os/exec"
	"testing"
)

// TestMain lets tests run the real command as a child process: with
// POLICYRUN_AS_CLI set, the test binary is policyrun itself. Crash tests
// need a process they can SIGKILL.
func TestMain(m *testing.M) {
	if os.Getenv("POLICYRUN_AS_CLI") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// needChildProcess skips the test under -short: it runs policyrun as a
// child process (cliCommand), which takes real time.
func needChildProcess(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs policyrun as a child process")
	}
}

// cliCommand is policyrun with args as a child process in dir: the test
// binary, which TestMain makes policyrun itself.
func cliCommand(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "POLICYRUN_AS_CLI=1")
	return cmd
}
