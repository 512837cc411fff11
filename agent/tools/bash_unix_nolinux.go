//go:build unix && !linux

package tools

import "os/exec"

// dieWithServer does nothing without Pdeathsig; guard stops the command.
func dieWithServer(*exec.Cmd) {}
