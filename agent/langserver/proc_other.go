//go:build !linux

package langserver

import "os/exec"

// detach does nothing here: the process group and the parent-death signal
// are Linux's.
func detach(*exec.Cmd) {}

// kill ends the server.
func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
