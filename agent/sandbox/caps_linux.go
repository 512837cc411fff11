package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// dropCapabilities leaves the calling thread, which must be locked and
// never given back, without any capability it could pass on: its bounding
// set emptied, its ambient set cleared, its effective, permitted and
// inheritable sets zero. A program it starts then gets none at exec, not
// even as root (root's file capabilities are masked by the bounding set),
// and no_new_privs keeps setuid programs and file capabilities from
// giving any back.
//
// None is kept, not even CAP_CHOWN or CAP_FOWNER for tar: Landlock does
// not govern chown or chmod, so a root command holding them could give
// /etc/shadow or the server's files to anyone. What a root command loses
// with them: tar x as root cannot give the archive's owners to the files
// it writes (pass --no-same-owner), and it cannot read, write or signal
// what is not its own (CAP_DAC_OVERRIDE, CAP_KILL).
//
// Emptying the bounding set needs CAP_SETPCAP; without it (an ordinary
// user outside a user namespace) the thread has no capability to drop, and
// the bounding set is left as it is.
func dropCapabilities() error {
	if err := dropBounding(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("sandbox: cannot clear the ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("sandbox: cannot drop the capabilities: %w", err)
	}
	return nil
}

// dropBounding empties the calling thread's bounding set when it has
// CAP_SETPCAP to do it.
func dropBounding() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: cannot read the capabilities: %w", err)
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) == 0 {
		return nil
	}
	for c := 0; c <= unix.CAP_LAST_CAP+24; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			return nil // past the kernel's last capability
		}
		if err != nil {
			return fmt.Errorf("sandbox: cannot drop capability %d: %w", c, err)
		}
	}
	return nil
}
