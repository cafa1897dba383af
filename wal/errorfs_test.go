package wal

import (
	"errors"
	"os"
	"sync"
)

// errInjected is the error errorFS returns for a chosen operation.
var errInjected = errors.New("injected failure")

// errorFS wraps an FS and fails the operations that inject chooses, in the
// manner of pebble's errorfs. Operations: mkdir, readdir, readfile, create,
// openrw, opendir, write, sync, truncate, close.
type errorFS struct {
	FS
	mu     sync.Mutex
	inject func(op, path string) error
}

func newErrorFS(inject func(op, path string) error) *errorFS {
	return &errorFS{FS: OSFS(), inject: inject}
}

func (e *errorFS) check(op, path string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inject == nil {
		return nil
	}
	return e.inject(op, path)
}

// failNth returns an inject function failing the nth (from 1) operation op
// on path, and every one after it when sticky.
func failNth(op, path string, nth int, sticky bool) func(string, string) error {
	n := 0
	return func(gotOp, gotPath string) error {
		if gotOp != op || gotPath != path {
			return nil
		}
		n++
		if n == nth || (sticky && n > nth) {
			return errInjected
		}
		return nil
	}
}

func (e *errorFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := e.check("mkdir", dir); err != nil {
		return err
	}
	return e.FS.MkdirAll(dir, perm)
}

func (e *errorFS) ReadDir(dir string) ([]os.DirEntry, error) {
	if err := e.check("readdir", dir); err != nil {
		return nil, err
	}
	return e.FS.ReadDir(dir)
}

func (e *errorFS) ReadFile(name string) ([]byte, error) {
	if err := e.check("readfile", name); err != nil {
		return nil, err
	}
	return e.FS.ReadFile(name)
}

func (e *errorFS) CreateExclusive(name string, perm os.FileMode) (File, error) {
	if err := e.check("create", name); err != nil {
		return nil, err
	}
	f, err := e.FS.CreateExclusive(name, perm)
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, fs: e, path: name}, nil
}

func (e *errorFS) OpenReadWrite(name string) (File, error) {
	if err := e.check("openrw", name); err != nil {
		return nil, err
	}
	f, err := e.FS.OpenReadWrite(name)
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, fs: e, path: name}, nil
}

func (e *errorFS) OpenDir(dir string) (File, error) {
	if err := e.check("opendir", dir); err != nil {
		return nil, err
	}
	f, err := e.FS.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	return &errorFile{File: f, fs: e, path: dir}, nil
}

type errorFile struct {
	File
	fs   *errorFS
	path string
}

func (f *errorFile) Write(p []byte) (int, error) {
	if err := f.fs.check("write", f.path); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *errorFile) Sync() error {
	if err := f.fs.check("sync", f.path); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *errorFile) Truncate(size int64) error {
	if err := f.fs.check("truncate", f.path); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

func (f *errorFile) Close() error {
	err := f.File.Close()
	if ierr := f.fs.check("close", f.path); ierr != nil {
		return ierr
	}
	return err
}
