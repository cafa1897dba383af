package cputime

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID.
const clockThreadCPUTime = 3

// Thread returns the CPU time, user and system, the calling OS thread has
// used so far, and false when it cannot be read. The caller should hold
// its goroutine on the thread (runtime.LockOSThread) between two readings.
// Unlike wall time it leaves out the time the thread waited for a core,
// so on a machine shared with other work it still measures what a step
// costs.
func Thread() (time.Duration, bool) {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
