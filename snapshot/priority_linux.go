package snapshot

import (
	"fmt"
	"syscall"
)

// threadPriorities: Linux sets one thread's nice value.
const threadPriorities = true

// lowerThreadPriority sets the calling thread's nice value to nice, unless
// the thread already runs at that priority or a lower one. The caller's
// goroutine must be locked to the thread, which must not run other
// goroutines afterwards (priority.go). It reports the nice value the
// thread runs at. On Linux, setpriority(2) with PRIO_PROCESS and a thread
// id sets that thread's nice value alone.
func lowerThreadPriority(nice int) (int, error) {
	cur, err := threadNice()
	if err != nil {
		return 0, fmt.Errorf("snapshot: read the thread's nice value: %w", err)
	}
	if cur >= nice {
		return cur, nil
	}
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice); err != nil {
		return cur, fmt.Errorf("snapshot: set the thread's nice value to %d: %w", nice, err)
	}
	return nice, nil
}

// threadNice returns the calling thread's nice value.
func threadNice() (int, error) {
	// The system call, unlike glibc's wrapper, returns 20 - nice.
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	return 20 - prio, err
}
