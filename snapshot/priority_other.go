//go:build !linux

package snapshot

import (
	"errors"
	"fmt"
)

// threadPriorities: only Linux sets one thread's nice value, so a
// snapshot runs at the process's priority, on the caller's thread.
const threadPriorities = false

// lowerThreadPriority reports errors.ErrUnsupported: only Linux sets one
// thread's nice value, and the snapshot then runs at the process's
// priority.
func lowerThreadPriority(nice int) (int, error) {
	return 0, fmt.Errorf("snapshot: a thread's nice value of %d: %w", nice, errors.ErrUnsupported)
}
