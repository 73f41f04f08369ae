//go:build !unix

package cdp

import "os/exec"

func ownGroup(cmd *exec.Cmd) {}

func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
