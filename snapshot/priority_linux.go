package snapshot

import (
	"fmt"
	"syscall"
)

// lowerThreadPriority sets the calling thread's nice value to nice, unless
// the thread already runs at that priority or a lower one. The caller's
// goroutine must be locked to the thread, which must not run other
// goroutines afterwards (priority.go). It reports the nice value the
// thread runs at. On Linux, setpriority(2) with PRIO_PROCESS and a thread
// id sets that thread's nice value alone.
func lowerThreadPriority(nice int) (int, error) {
	tid := syscall.Gettid()
	// The system call, unlike glibc's wrapper, returns 20 - nice.
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err != nil {
		return 0, fmt.Errorf("snapshot: read the thread's nice value: %w", err)
	}
	if cur := 20 - prio; cur >= nice {
		return cur, nil
	}
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil {
		return 20 - prio, fmt.Errorf("snapshot: set the thread's nice value to %d: %w", nice, err)
	}
	return nice, nil
}
