package wal

import (
	"fmt"
	"os"
	"syscall"
)

// rawFsync says that syncTail may fsync the tail segment with a raw system
// call (tailsync.go). On Linux os.File.Sync is fsync(2) itself (package
// internal/poll), so the raw call makes the data as durable.
const rawFsync = true

// fsyncHolding fsyncs f with a raw system call, one the scheduler does not
// see (tailsync.go), retried on EINTR.
func fsyncHolding(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		for {
			_, _, errno = syscall.RawSyscall(syscall.SYS_FSYNC, fd, 0, 0)
			if errno != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	if errno != 0 {
		return &os.PathError{Op: "fsync", Path: f.Name(), Err: errno}
	}
	return nil
}
