package dirlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FileName is the lock file's name inside the data directory.
const FileName = "LOCK"

// ErrLocked reports a directory locked by another process (or another lock
// of this one).
var ErrLocked = errors.New("dirlock: data directory in use")

// Lock is a held lock; Release drops it.
type Lock struct {
	f *os.File
}

// Exclusive takes the exclusive lock of dir, creating dir and its LOCK file
// when missing. It does not wait: a lock held elsewhere is ErrLocked.
func Exclusive(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("dirlock: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("dirlock: open %s: %w", path, err)
	}
	if err := flock(f, true); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", path, err), f.Close())
	}
	return &Lock{f: f}, nil
}

// Shared takes a shared lock of dir without writing anything: when dir or
// its LOCK file does not exist, no server ever ran there and it returns a
// nil Lock (whose Release does nothing) and no error. A server holding the
// directory makes it fail with ErrLocked.
func Shared(dir string) (*Lock, error) {
	path := filepath.Join(dir, FileName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dirlock: open %s: %w", path, err)
	}
	if err := flock(f, false); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", path, err), f.Close())
	}
	return &Lock{f: f}, nil
}

// Release drops the lock. It may be called on a nil Lock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	if err := f.Close(); err != nil { // closing the descriptor drops the flock
		return fmt.Errorf("dirlock: release %s: %w", f.Name(), err)
	}
	return nil
}
