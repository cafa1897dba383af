package snapshot

import (
	"os"
	"syscall"

	"marketd/internal/vfs"
)

// Flags of sync_file_range(2), from linux/fs.h; package syscall has the
// call but not its flags.
const (
	syncFileRangeWaitBefore = 0x1
	syncFileRangeWrite      = 0x2
	syncFileRangeWaitAfter  = 0x4
)

// fileRanges is the rangeSyncer of an *os.File.
type fileRanges struct{ f *os.File }

// newRangeSyncer returns the rangeSyncer of f when f is a real file, nil
// otherwise.
func newRangeSyncer(f vfs.File) rangeSyncer {
	if of, ok := f.(*os.File); ok {
		return fileRanges{f: of}
	}
	return nil
}

func (r fileRanges) start(off, n int64) error { return r.call(off, n, syncFileRangeWrite) }

func (r fileRanges) wait(off, n int64) error {
	return r.call(off, n, syncFileRangeWaitBefore|syncFileRangeWrite|syncFileRangeWaitAfter)
}

func (r fileRanges) call(off, n int64, flags int) error {
	sc, err := r.f.SyscallConn()
	if err != nil {
		return err
	}
	var callErr error
	if err := sc.Control(func(fd uintptr) {
		callErr = syscall.SyncFileRange(int(fd), off, n, flags)
	}); err != nil {
		return err
	}
	if callErr != nil {
		return os.NewSyscallError("sync_file_range", callErr)
	}
	return nil
}
