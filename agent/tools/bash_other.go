//go:build !unix

package tools

import "os/exec"

// ownGroup does nothing where there are no process groups.
func ownGroup(cmd *exec.Cmd) {}

// killGroup kills the command's process; its children may survive.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// guard does nothing where there are no process groups.
func guard(*exec.Cmd) (stop func()) { return func() {} }

// dieWithServer does nothing here.
func dieWithServer(*exec.Cmd) {}
