package snapshot

import (
	"io"
	"os"
)

// FS is the file system the package writes and reads snapshots through;
// production uses OSFS, tests inject failures and damage.
type FS interface {
	// ReadDir lists dir, sorted by name.
	ReadDir(dir string) ([]os.DirEntry, error)
	// ReadFile returns a file's whole content.
	ReadFile(name string) ([]byte, error)
	// Create creates or truncates a file for writing.
	Create(name string) (File, error)
	// OpenDir opens a directory so that it can be fsynced.
	OpenDir(dir string) (File, error)
	// Rename atomically replaces newpath with oldpath.
	Rename(oldpath, newpath string) error
	// Remove deletes a file.
	Remove(name string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(dir string, perm os.FileMode) error
}

// File is an open file or directory of an FS.
type File interface {
	io.Writer
	io.Closer
	// Sync commits the file to stable storage.
	Sync() error
}

// OSFS returns the FS backed by package os.
func OSFS() FS { return osFS{} }

type osFS struct{}

// ReadDir is os.ReadDir.
func (osFS) ReadDir(dir string) ([]os.DirEntry, error) { return os.ReadDir(dir) }

// ReadFile is os.ReadFile.
func (osFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

// Create opens name for writing, creating or truncating it.
func (osFS) Create(name string) (File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
}

// OpenDir is os.Open, for a directory to fsync.
func (osFS) OpenDir(dir string) (File, error) { return os.Open(dir) }

// Rename is os.Rename.
func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove is os.Remove.
func (osFS) Remove(name string) error { return os.Remove(name) }

// MkdirAll is os.MkdirAll.
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }
