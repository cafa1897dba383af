//go:build unix

package dirlock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// flock takes the lock without blocking.
func flock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return fmt.Errorf("%w: held by another process", ErrLocked)
		default:
			return fmt.Errorf("flock: %w", err)
		}
	}
}
