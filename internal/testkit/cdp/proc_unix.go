//go:build unix

package cdp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that kill ends
// the browser's helper processes with it.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// kill ends the process group of cmd, started with ownGroup.
func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
