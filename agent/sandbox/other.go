//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
)

// Probe reports that Landlock is not available: it is Linux only.
func Probe() Status { return Status{Why: "Landlock is Linux only"} }

// Start returns an error wrapping ErrUnavailable: Landlock is Linux only.
func (p Policy) Start(cmd *exec.Cmd) error {
	return fmt.Errorf("%w: %s", ErrUnavailable, Probe().Why)
}

// HideEnvironment does nothing where there is no /proc to hide from.
func HideEnvironment() error { return nil }
