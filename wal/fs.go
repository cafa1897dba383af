package wal

import (
	"io"
	"os"
)

// FS is the file system for the package's own file operations: repair
// (read, copy aside, truncate, fsync), replay (read segments) and directory
// fsyncs. Tidwall opens and writes its segment files itself, through package
// os, so a test that damages those works on real files instead.
//
// Production uses OSFS. Tests wrap it to fail chosen operations, in the
// manner of pebble's errorfs.
type FS interface {
	// MkdirAll creates dir and any missing parents.
	MkdirAll(dir string, perm os.FileMode) error
	// ReadDir lists dir, sorted by name.
	ReadDir(dir string) ([]os.DirEntry, error)
	// ReadFile returns the whole content of a file.
	ReadFile(name string) ([]byte, error)
	// CreateExclusive creates a new file for writing; it fails with an
	// error matching os.ErrExist when the file exists.
	CreateExclusive(name string, perm os.FileMode) (File, error)
	// OpenReadWrite opens an existing file for writing and truncation.
	OpenReadWrite(name string) (File, error)
	// OpenDir opens a directory so that it can be fsynced.
	OpenDir(dir string) (File, error)
}

// File is an open file or directory of an FS.
type File interface {
	io.Writer
	io.Closer
	// Sync commits the file's content and metadata to stable storage.
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
}

// OSFS returns the FS backed by package os.
func OSFS() FS { return osFS{} }

// osFS is the FS of package os; *os.File is its File.
type osFS struct{}

// MkdirAll is os.MkdirAll.
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }

// ReadDir is os.ReadDir.
func (osFS) ReadDir(dir string) ([]os.DirEntry, error) { return os.ReadDir(dir) }

// ReadFile is os.ReadFile.
func (osFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

// CreateExclusive opens name with O_CREATE|O_EXCL for writing.
func (osFS) CreateExclusive(name string, perm os.FileMode) (File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

// OpenReadWrite opens an existing file with O_RDWR.
func (osFS) OpenReadWrite(name string) (File, error) { return os.OpenFile(name, os.O_RDWR, 0) }

// OpenDir opens a directory read-only, which is enough to fsync it.
func (osFS) OpenDir(dir string) (File, error) { return os.Open(dir) }
