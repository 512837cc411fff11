package tools

import (
	"os/exec"
	"syscall"
)

// dieWithServer has the kernel kill the command's process when the server
// dies (Pdeathsig): its own process, not what it started (see guard).
// Never for a contained command: Pdeathsig fires when the thread that
// started it exits (see package sandbox).
func dieWithServer(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
