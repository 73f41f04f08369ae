package main

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunSignalStopsLoopingScript: SIGTERM and SIGINT end a run within the
// script's time_limit plus a second, even while every record makes the
// script loop (before, the stage ran out the batch in hand, a time limit
// per record, or for ever without one).
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
				"spin.lua": "function cb(tag, ts, record) while true do end end\n",
				"p.yaml": headPipeline(`
  filters:
    - name: lua
      script: spin.lua
      call: cb
      time_limit: 2s
  outputs:
    - name: null
`),
			})
			cmd := cliCommand(dir, "run", "p.yaml")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			time.Sleep(500 * time.Millisecond) // the first record loops
			cmd.Process.Signal(sig)
			start := time.Now()
			select {
			case err := <-done:
				if d := time.Since(start); d > 3*time.Second {
					t.Errorf("the run ended %v after the signal, over time_limit plus a second", d)
				}
				if err != nil {
					t.Errorf("exit: %v\n%s", err, &stderr)
				}
				if !strings.Contains(stderr.String(), "timeout") {
					t.Errorf("the summary does not count the stopped calls as timeout:\n%s", &stderr)
				}
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("the run did not end 15s after %v\n%s", sig, &stderr)
			}
		})
	}
}
