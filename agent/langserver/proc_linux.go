package langserver

import (
	"os/exec"
	"syscall"
)

// detach puts the server in a process group of its own, which kill ends
// whole (gopls runs go list, clangd its indexers), and has the kernel
// kill it when the thread that started it dies, which start keeps alive
// while the server runs: nothing a crashed Reika started outlives it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// kill ends the server's process group.
func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
