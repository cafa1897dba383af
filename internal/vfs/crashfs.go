package vfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// CrashFS is an FS in memory that remembers what a machine would keep if it
// lost power now: a file's content as of its last Sync, and a directory's
// entries (creations, renames, removals) as of the directory's last Sync.
// Crash returns that durable state as a new CrashFS. Directories made by
// MkdirAll are durable at once: marketd syncs a new directory's parent, and
// modelling that too would test nothing of marketd's own ordering.
//
// It is safe for concurrent use; every operation takes one lock.
type CrashFS struct {
	mu   sync.Mutex
	dirs map[string]*memDir // by clean path
}

// memDir is a directory: its current entries and those a crash keeps.
type memDir struct {
	entries map[string]*inode
	synced  map[string]*inode
}

// inode is a file: its current content and the content a crash keeps.
type inode struct {
	data   []byte
	synced []byte
}

// NewCrashFS returns an empty CrashFS.
func NewCrashFS() *CrashFS { return &CrashFS{dirs: map[string]*memDir{}} }

// Crash returns a new CrashFS holding only what was durable in c: what a
// restart after a power loss would find. c itself is unchanged.
func (c *CrashFS) Crash() *CrashFS {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := NewCrashFS()
	clones := map[*inode]*inode{}
	for path, d := range c.dirs {
		nd := &memDir{entries: map[string]*inode{}, synced: map[string]*inode{}}
		for name, ino := range d.synced {
			n, ok := clones[ino]
			if !ok {
				n = &inode{data: slices.Clone(ino.synced), synced: slices.Clone(ino.synced)}
				clones[ino] = n
			}
			nd.entries[name] = n
			nd.synced[name] = n
		}
		out.dirs[path] = nd
	}
	return out
}

func notExist(op, path string) error { return &os.PathError{Op: op, Path: path, Err: fs.ErrNotExist} }

// parent returns the directory holding path and the base name.
// Caller holds c.mu.
func (c *CrashFS) parent(op, path string) (*memDir, string, error) {
	path = filepath.Clean(path)
	d, ok := c.dirs[filepath.Dir(path)]
	if !ok {
		return nil, "", notExist(op, path)
	}
	return d, filepath.Base(path), nil
}

// MkdirAll implements FS.
func (c *CrashFS) MkdirAll(dir string, perm os.FileMode) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, ok := c.dirs[p]; !ok {
			if d, ok := c.dirs[filepath.Dir(p)]; ok && d.entries[filepath.Base(p)] != nil {
				return &os.PathError{Op: "mkdir", Path: p, Err: fs.ErrExist}
			}
			c.dirs[p] = &memDir{entries: map[string]*inode{}, synced: map[string]*inode{}}
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

// ReadDir implements FS: the files and subdirectories of dir, by name.
func (c *CrashFS) ReadDir(dir string) ([]os.DirEntry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	dir = filepath.Clean(dir)
	d, ok := c.dirs[dir]
	if !ok {
		return nil, notExist("readdir", dir)
	}
	var out []os.DirEntry
	for name, ino := range d.entries {
		out = append(out, fs.FileInfoToDirEntry(memInfo{name: name, size: int64(len(ino.data))}))
	}
	for p := range c.dirs {
		if p != dir && filepath.Dir(p) == dir {
			out = append(out, fs.FileInfoToDirEntry(memInfo{name: filepath.Base(p), dir: true}))
		}
	}
	slices.SortFunc(out, func(a, b os.DirEntry) int {
		switch {
		case a.Name() < b.Name():
			return -1
		case a.Name() > b.Name():
			return 1
		}
		return 0
	})
	return out, nil
}

// ReadFile implements FS.
func (c *CrashFS) ReadFile(name string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ino, err := c.file(name)
	if err != nil {
		return nil, err
	}
	return slices.Clone(ino.data), nil
}

// file returns the existing file name. Caller holds c.mu.
func (c *CrashFS) file(name string) (*inode, error) {
	d, base, err := c.parent("open", name)
	if err != nil {
		return nil, err
	}
	ino, ok := d.entries[base]
	if !ok {
		return nil, notExist("open", name)
	}
	return ino, nil
}

// Create implements FS.
func (c *CrashFS) Create(name string, _ os.FileMode) (File, error) {
	return c.create(name, false)
}

// CreateExclusive implements FS.
func (c *CrashFS) CreateExclusive(name string, _ os.FileMode) (File, error) {
	return c.create(name, true)
}

func (c *CrashFS) create(name string, excl bool) (File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, base, err := c.parent("open", name)
	if err != nil {
		return nil, err
	}
	if _, isDir := c.dirs[filepath.Clean(name)]; isDir {
		return nil, &os.PathError{Op: "open", Path: name, Err: fmt.Errorf("is a directory")}
	}
	ino, ok := d.entries[base]
	switch {
	case ok && excl:
		return nil, &os.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	case ok:
		ino.data = ino.data[:0:0]
	default:
		ino = &inode{}
		d.entries[base] = ino
	}
	return &memFile{fs: c, ino: ino, path: name}, nil
}

// OpenReadWrite implements FS.
func (c *CrashFS) OpenReadWrite(name string) (File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ino, err := c.file(name)
	if err != nil {
		return nil, err
	}
	return &memFile{fs: c, ino: ino, path: name}, nil
}

// OpenDir implements FS.
func (c *CrashFS) OpenDir(dir string) (File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.dirs[filepath.Clean(dir)]
	if !ok {
		return nil, notExist("open", dir)
	}
	return &memFile{fs: c, dir: d, path: dir}, nil
}

// Rename implements FS for files.
func (c *CrashFS) Rename(oldpath, newpath string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	od, obase, err := c.parent("rename", oldpath)
	if err != nil {
		return err
	}
	ino, ok := od.entries[obase]
	if !ok {
		return notExist("rename", oldpath)
	}
	nd, nbase, err := c.parent("rename", newpath)
	if err != nil {
		return err
	}
	delete(od.entries, obase)
	nd.entries[nbase] = ino
	return nil
}

// Remove implements FS: a file, or an empty directory.
func (c *CrashFS) Remove(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	clean := filepath.Clean(name)
	if d, ok := c.dirs[clean]; ok {
		if len(d.entries) > 0 {
			return &os.PathError{Op: "remove", Path: name, Err: fmt.Errorf("directory not empty")}
		}
		delete(c.dirs, clean)
		return nil
	}
	d, base, err := c.parent("remove", name)
	if err != nil {
		return err
	}
	if _, ok := d.entries[base]; !ok {
		return notExist("remove", name)
	}
	delete(d.entries, base)
	return nil
}

// memFile is an open file (ino set) or directory (dir set) of a CrashFS.
type memFile struct {
	fs     *CrashFS
	ino    *inode
	dir    *memDir
	path   string
	off    int
	closed bool
}

func (f *memFile) check(op string) error {
	if f.closed {
		return &os.PathError{Op: op, Path: f.path, Err: fs.ErrClosed}
	}
	return nil
}

// Write writes p at the file's offset.
func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write"); err != nil {
		return 0, err
	}
	if f.ino == nil {
		return 0, &os.PathError{Op: "write", Path: f.path, Err: fmt.Errorf("is a directory")}
	}
	if end := f.off + len(p); end > len(f.ino.data) {
		f.ino.data = append(f.ino.data, make([]byte, end-len(f.ino.data))...)
	}
	copy(f.ino.data[f.off:], p)
	f.off += len(p)
	return len(p), nil
}

// Sync makes the file's content, or the directory's entries, durable.
func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("sync"); err != nil {
		return err
	}
	if f.dir != nil {
		f.dir.synced = make(map[string]*inode, len(f.dir.entries))
		for name, ino := range f.dir.entries {
			f.dir.synced[name] = ino
		}
		return nil
	}
	f.ino.synced = slices.Clone(f.ino.data)
	return nil
}

// Truncate changes the file's size, zero-filling when it grows.
func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("truncate"); err != nil {
		return err
	}
	if f.ino == nil || size < 0 {
		return &os.PathError{Op: "truncate", Path: f.path, Err: fs.ErrInvalid}
	}
	if int(size) <= len(f.ino.data) {
		f.ino.data = f.ino.data[:size]
	} else {
		f.ino.data = append(f.ino.data, make([]byte, int(size)-len(f.ino.data))...)
	}
	return nil
}

// Close closes the file; a second Close fails as os.File's does.
func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("close"); err != nil {
		return err
	}
	f.closed = true
	return nil
}

// memInfo is the fs.FileInfo of a CrashFS entry.
type memInfo struct {
	name string
	size int64
	dir  bool
}

// Name returns the file's base name.
func (i memInfo) Name() string { return i.name }

// Size returns the file's length in bytes, as written (synced or not).
func (i memInfo) Size() int64 { return i.size }

// Mode returns a directory or a regular file's mode.
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o750
	}
	return 0o640
}

// ModTime returns the zero time: nothing in marketd reads it.
func (i memInfo) ModTime() time.Time { return time.Time{} }

// IsDir reports whether the entry is a directory.
func (i memInfo) IsDir() bool { return i.dir }

// Sys returns nil: there is no underlying system value.
func (i memInfo) Sys() any { return nil }
