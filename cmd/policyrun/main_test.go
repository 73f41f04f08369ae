package main

import (
	"os"
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
