package load

import (
	"errors"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// pausesSupported is true: pauses are Linux's (pauseOnce).
const pausesSupported = true

// pauseThreadPriority is the pausing thread's SCHED_FIFO priority: above
// every thread of the server and the load (all SCHED_OTHER), so that the
// thread gets a CPU as soon as its sleep ends. It still needs one of the
// Go runtime's processors to send the SIGCONT: with every other goroutine
// of the process spinning, 30 ms pauses ran 20 ms over by median (41 ms
// at most); in marketd-load's runs, whose workers block on their
// connections, 60 ms pauses lasted 60.1-62.2 ms (docs/PERFORMANCE.md,
// "The drain after a stall"). The report gives each run's shortest and
// longest pause, so that an overrun shows.
const pauseThreadPriority = 50

// pauseThread locks the calling goroutine to its thread and asks for a
// real-time priority for it (refused without CAP_SYS_NICE); release
// undoes both.
func pauseThread() (release func(), realtime bool) {
	runtime.LockOSThread()
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: pauseThreadPriority}
	if unix.SchedSetAttr(0, &attr, 0) != nil {
		return runtime.UnlockOSThread, false
	}
	return func() {
		normal := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}
		if unix.SchedSetAttr(0, &normal, 0) != nil {
			return // the thread stays locked, and exits with its goroutine
		}
		runtime.UnlockOSThread()
	}, true
}

// pauseOnce stops pid for d and resumes it. It sleeps in nanosleep(2) on
// the pausing thread rather than on a Go timer, which a busy runtime may
// fire late (what is left of the lateness: pauseThreadPriority); the
// resume is sent even when the sleep fails. Holding the processor through
// the sleep instead (a raw nanosleep) was tried and measured worse, 34 ms
// over by median against 20 in the same test: the runtime's preemption
// interrupts the sleep and then parks the goroutine anyway.
func pauseOnce(pid int, d time.Duration) (Window, error) {
	start := time.Now()
	if err := unix.Kill(pid, unix.SIGSTOP); err != nil {
		return Window{}, err
	}
	req := unix.NsecToTimespec(d.Nanoseconds())
	var sleepErr error
	for {
		var left unix.Timespec
		err := unix.Nanosleep(&req, &left)
		if !errors.Is(err, unix.EINTR) {
			sleepErr = err
			break
		}
		req = left
	}
	contErr := unix.Kill(pid, unix.SIGCONT)
	return Window{Start: start, End: time.Now()}, errors.Join(sleepErr, contErr)
}
