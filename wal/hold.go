package wal

import (
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// A goroutine in a blocking system call enters it through the runtime,
// which marks its processor as in a system call; the runtime's monitor
// (sysmon) then takes the processor away and starts or wakes another
// thread to run it, once the call has lasted past one of its ticks (20 us
// and up). The writer blocks in an fsync for 0.5-1 ms on every commit, so
// under load the monitor takes its processor on nearly every commit, and
// having found work to do it keeps polling every 20 us instead of backing
// off to 10 ms: in the closed loop, 4,000-4,500 monitor wake-ups a second,
// a futex wake-up and a thread switch for each handed-off processor, all
// on a machine whose every core is busy (docs/PERFORMANCE.md, "The
// writer's fsync on its own processor").
//
// marketd runs one processor beyond its cores for this goroutine
// (internal/procs: -spare-procs), so it can afford to keep it: the fsync
// and the commit interval's sleep are then made as raw system calls, which
// the runtime does not see. The other goroutines still have a processor
// per core. The costs: a stop-the-world of the collector waits for the
// call to return (up to one fsync, whose waiting commits could not be
// acknowledged before it ends anyway, or the rest of one commit interval,
// 1 ms by default and at most MaxCommitInterval), and with no spare
// processor the call would take a core's processor from every other
// goroutine, which is why Options.FsyncHoldsProcessor is set only with one.

// FsyncHolding fsyncs f by fsync(2) made as a raw system call: the caller
// keeps its processor for the whole call (see above). An interrupted call
// is made again. The error is an *os.PathError, as os.File.Sync returns.
func FsyncHolding(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	return fsyncRaw(rc, f.Name())
}

// fsyncRaw is FsyncHolding on rc, the raw connection of the file named
// name: a caller that fsyncs one file many times gets rc once (os.File's
// SyscallConn allocates one per call).
func fsyncRaw(rc syscall.RawConn, name string) error {
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		for {
			_, _, errno = syscall.RawSyscall(syscall.SYS_FSYNC, fd, 0, 0)
			if errno != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return fmt.Errorf("fsync %s: %w", name, err)
	}
	if errno != 0 {
		return &os.PathError{Op: "fsync", Path: name, Err: errno}
	}
	return nil
}

// NanosleepHolding is Nanosleep made as a raw system call: the caller
// keeps its processor while it sleeps (see above).
func NanosleepHolding(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		_, _, errno := syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), uintptr(unsafe.Pointer(&ts)), 0)
		if errno != syscall.EINTR {
			return
		}
		// A signal cut it short: sleep the rest, left in ts.
	}
}
