package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// FS is the file system marketd's own file code goes through.
type FS interface {
	// MkdirAll creates dir and any missing parents.
	MkdirAll(dir string, perm os.FileMode) error
	// ReadDir lists dir, sorted by name.
	ReadDir(dir string) ([]os.DirEntry, error)
	// ReadFile returns the whole content of a file.
	ReadFile(name string) ([]byte, error)
	// Create creates or truncates a file for writing.
	Create(name string, perm os.FileMode) (File, error)
	// CreateExclusive creates a new file for writing; it fails with an
	// error matching os.ErrExist when the file exists.
	CreateExclusive(name string, perm os.FileMode) (File, error)
	// OpenReadWrite opens an existing file for writing and truncation.
	OpenReadWrite(name string) (File, error)
	// OpenDir opens a directory so that it can be fsynced.
	OpenDir(dir string) (File, error)
	// Rename atomically replaces newpath with oldpath.
	Rename(oldpath, newpath string) error
	// Remove deletes a file or an empty directory.
	Remove(name string) error
}

// File is an open file or directory of an FS. Writes append at the file's
// offset, which starts at 0.
type File interface {
	io.Writer
	io.Closer
	// Sync commits the file's content and metadata (for a directory: its
	// entries) to stable storage.
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
}

// Default returns the FS backed by package os.
func Default() FS { return osFS{} }

// osFS is the FS of package os; *os.File is its File.
type osFS struct{}

// MkdirAll is os.MkdirAll.
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }

// ReadDir is os.ReadDir.
func (osFS) ReadDir(dir string) ([]os.DirEntry, error) { return os.ReadDir(dir) }

// ReadFile is os.ReadFile.
func (osFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

// ReadFileInto returns the whole content of a file, read into buf when it
// is large enough (else into a new slice): the log's replay reads segment
// after segment into the same few buffers, where a new slice per segment
// cost a page fault per 4 KiB read.
func (osFS) ReadFileInto(name string, buf []byte) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := int(info.Size())
	if cap(buf) < size {
		buf = make([]byte, size)
	}
	n, err := io.ReadFull(f, buf[:size])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return buf[:n], nil
}

// Create opens name with O_CREATE|O_TRUNC for writing.
func (osFS) Create(name string, perm os.FileMode) (File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
}

// CreateExclusive opens name with O_CREATE|O_EXCL for writing.
func (osFS) CreateExclusive(name string, perm os.FileMode) (File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

// OpenReadWrite opens an existing file with O_RDWR.
func (osFS) OpenReadWrite(name string) (File, error) { return os.OpenFile(name, os.O_RDWR, 0) }

// OpenDir opens a directory read-only, which is enough to fsync it.
func (osFS) OpenDir(dir string) (File, error) { return os.Open(dir) }

// Rename is os.Rename.
func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove is os.Remove.
func (osFS) Remove(name string) error { return os.Remove(name) }

// SyncDir fsyncs a directory, making the creation, removal and renaming of
// the files in it durable: a rename or a new file is not durable until its
// directory is synced, whatever was done to the file itself.
func SyncDir(fsys FS, dir string) error {
	d, err := fsys.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("vfs: open directory %s: %w", dir, err)
	}
	if err := d.Sync(); err != nil {
		return errors.Join(fmt.Errorf("vfs: fsync directory %s: %w", dir, err), d.Close())
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("vfs: close directory %s: %w", dir, err)
	}
	return nil
}

// WriteFileSync writes data to a new file name (which must not exist),
// fsyncs and closes it. It does not sync the directory.
func WriteFileSync(fsys FS, name string, data []byte, perm os.FileMode) error {
	f, err := fsys.CreateExclusive(name, perm)
	if err != nil {
		return fmt.Errorf("vfs: create %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		return errors.Join(fmt.Errorf("vfs: write %s: %w", name, err), f.Close())
	}
	if err := f.Sync(); err != nil {
		return errors.Join(fmt.Errorf("vfs: fsync %s: %w", name, err), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("vfs: close %s: %w", name, err)
	}
	return nil
}
