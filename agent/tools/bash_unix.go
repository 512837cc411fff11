//go:build unix

package tools

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// ownGroup puts the command in a process group of its own, so that it can
// be stopped with everything it started.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the command's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// guard starts a watchdog that kills the command's process group when the
// server dies, kill -9 included: it reads a pipe only the server holds
// open, and the kernel closes it with the server. A command must not
// outlive the server that started it, contained or not (Pdeathsig cannot
// be set on a contained one, and reaches only the command's own process).
// stop ends the watchdog once the command has ended.
func guard(cmd *exec.Cmd) (stop func()) {
	r, w, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	g := exec.Command("sh", "-c", `read _; kill -KILL -"$1" 2>/dev/null`, "reika-guard", strconv.Itoa(cmd.Process.Pid))
	g.Stdin = r
	g.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = g.Start()
	r.Close()
	if err != nil {
		w.Close()
		return func() {}
	}
	return func() {
		g.Process.Kill()
		g.Wait()
		w.Close()
	}
}
