//go:build !linux

package snapshot

import (
	"errors"
	"fmt"
)

// lowerThreadPriority reports errors.ErrUnsupported: only Linux sets one
// thread's nice value, and the snapshot then runs at the process's
// priority.
func lowerThreadPriority(nice int) (int, error) {
	return 0, fmt.Errorf("snapshot: a thread's nice value of %d: %w", nice, errors.ErrUnsupported)
}
