//go:build unix

package transcript

import (
	"errors"
	"os"
	"syscall"
)

// lock takes an exclusive lock on f, without waiting: errLocked when
// another open file holds it. Closing f releases it.
func lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		case !errors.Is(err, syscall.EINTR):
			return err
		}
	}
}
