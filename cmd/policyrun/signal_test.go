package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

// TestRunSignalStopsLoopingScript: SIGTERM and SIGINT end a run within the
// script's time_limit plus two seconds, even while every record makes the
// script loop (before, the stage ran out the batch in hand, a time limit
// per record, or for ever without one). The call in progress gets its time
// limit; a second call would take as long again, over the bound, which
// leaves a loaded machine two seconds to stop (with one, a run under load
// ended 3.06 s after the signal with a 2 s limit).
func TestRunSignalStopsLoopingScript(t *testing.T) {
	needChildProcess(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			var lines strings.Builder
			for i := range 50 {
				fmt.Fprintf(&lines, `{"n":%d}`+"\n", i)
			}
			dir := writeFiles(t, map[string]string{
				"a.log":    lines.String(),
				"spin.lua": "function cb(tag, ts, record) print(\"spinning\") while true do end end\n",
				"p.yaml": headPipeline(`
  filters:
    - name: lua
      script: spin.lua
      call: cb
      time_limit: 3s
  outputs:
    - name: null
`),
			})
			cmd := cliCommand(dir, "run", "p.yaml")
			var stderr testsync.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// The signal must come while the script loops, which it prints
			// it is about to do: after a fixed pause, on a loaded machine,
			// it came before the child caught signals, and ended it.
			if !testsync.Eventually(30*time.Second, func() bool { return strings.Contains(stderr.String(), "spinning") }) {
				cmd.Process.Kill()
				<-done
				t.Fatalf("the script did not start within 30s\n%s", &stderr)
			}
			cmd.Process.Signal(sig)
			start := time.Now()
			select {
			case err := <-done:
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("the run ended %v after the signal, over time_limit plus two seconds", d)
				}
				if err != nil {
					t.Errorf("exit: %v\n%s", err, &stderr)
				}
				if !strings.Contains(stderr.String(), "timeout") {
					t.Errorf("the summary does not count the stopped calls as timeout:\n%s", &stderr)
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("the run did not end 30s after %v\n%s", sig, &stderr)
			}
		})
	}
}
