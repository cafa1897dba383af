package vfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ErrInjected is the error an ErrorFS returns for an operation its
// Injector chose to fail.
var ErrInjected = errors.New("vfs: injected failure")

// OpKind names an FS or File operation.
type OpKind int

// The operations an ErrorFS sees.
const (
	OpMkdir OpKind = iota
	OpReadDir
	OpReadFile
	OpCreate
	OpOpen // OpenReadWrite and OpenDir
	OpWrite
	OpSync
	OpTruncate
	OpClose
	OpRename
	OpRemove
	// OpExternal is a step outside the FS that a test routes through the
	// same Injector with ErrorFS.Inject, such as the log's truncation by
	// tidwall, so that one count covers every step of a procedure.
	OpExternal
)

var opNames = [...]string{"mkdir", "readdir", "readfile", "create", "open", "write", "sync", "truncate",
	"close", "rename", "remove", "external"}

// String returns the operation's name.
func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return fmt.Sprintf("op(%d)", int(k))
}

// Mutates reports whether the operation can change what is on disk.
func (k OpKind) Mutates() bool {
	switch k {
	case OpMkdir, OpCreate, OpWrite, OpSync, OpTruncate, OpRename, OpRemove, OpExternal:
		return true
	}
	return false
}

// Op is one operation: its kind and the path it is on (the file's path for
// the operations of an open File; the old path of a rename).
type Op struct {
	Kind OpKind
	Path string
}

// String returns "kind path".
func (o Op) String() string { return o.Kind.String() + " " + o.Path }

// Predicate chooses operations.
type Predicate func(Op) bool

// Kinds chooses the operations of the given kinds.
func Kinds(kinds ...OpKind) Predicate {
	return func(o Op) bool {
		for _, k := range kinds {
			if o.Kind == k {
				return true
			}
		}
		return false
	}
}

// Mutating chooses the operations that can change what is on disk.
func Mutating(o Op) bool { return o.Kind.Mutates() }

// Under chooses operations on dir or a path inside it.
func Under(dir string) Predicate {
	dir = filepath.Clean(dir)
	return func(o Op) bool {
		p := filepath.Clean(o.Path)
		return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
	}
}

// And chooses the operations every predicate chooses.
func And(ps ...Predicate) Predicate {
	return func(o Op) bool {
		for _, p := range ps {
			if !p(o) {
				return false
			}
		}
		return true
	}
}

// Injector decides whether an operation fails. Its methods are called with
// the ErrorFS's lock held, one at a time.
type Injector interface {
	// MaybeError returns the error op fails with, or nil.
	MaybeError(op Op) error
}

// nth fails the nth operation matching a predicate, and with sticky every
// matching one after it.
type nth struct {
	pred   Predicate
	n      int
	sticky bool
	seen   int
}

// MaybeError fails the Nth operation its predicate matches (once, or from
// then on), counting only the matching ones.
func (f *nth) MaybeError(op Op) error {
	if !f.pred(op) {
		return nil
	}
	f.seen++
	if f.seen == f.n || (f.sticky && f.seen > f.n) {
		return fmt.Errorf("%w: %s (match %d)", ErrInjected, op, f.seen)
	}
	return nil
}

// FailNth fails the nth (from 1) operation that p chooses, only that one.
func FailNth(p Predicate, n int) Injector { return &nth{pred: p, n: n} }

// FailFrom fails the nth (from 1) operation that p chooses and every one
// after it: with Mutating, a crash at that operation.
func FailFrom(p Predicate, n int) Injector { return &nth{pred: p, n: n, sticky: true} }

// anyOf fails an operation when any of its injectors does. Every injector
// sees every operation, so that their counts do not depend on each other.
type anyOf []Injector

// MaybeError asks every injector, so that each counts the operation, and
// returns the first error.
func (a anyOf) MaybeError(op Op) error {
	var first error
	for _, inj := range a {
		if err := inj.MaybeError(op); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Any combines injectors: an operation fails when one of them fails it.
func Any(injs ...Injector) Injector { return anyOf(injs) }

// ErrorFS wraps an FS and fails the operations its Injector chooses; it
// also counts the operations it saw, for tests that crash at each of them
// in turn.
type ErrorFS struct {
	inner FS
	mu    sync.Mutex // guards inj and ops
	inj   Injector
	ops   []Op
}

// NewErrorFS returns an ErrorFS over inner; inj may be nil (nothing fails)
// and can be set later with SetInjector.
func NewErrorFS(inner FS, inj Injector) *ErrorFS { return &ErrorFS{inner: inner, inj: inj} }

// SetInjector replaces the injector.
func (e *ErrorFS) SetInjector(inj Injector) {
	e.mu.Lock()
	e.inj = inj
	e.mu.Unlock()
}

// Inject records op and returns the error the injector chooses for it. The
// FS's methods call it; a test calls it for a step outside the FS.
func (e *ErrorFS) Inject(op Op) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ops = append(e.ops, op)
	if e.inj == nil {
		return nil
	}
	return e.inj.MaybeError(op)
}

// Ops returns the operations seen so far, in order.
func (e *ErrorFS) Ops() []Op {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Op(nil), e.ops...)
}

// MkdirAll implements FS.
func (e *ErrorFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := e.Inject(Op{OpMkdir, dir}); err != nil {
		return err
	}
	return e.inner.MkdirAll(dir, perm)
}

// ReadDir implements FS.
func (e *ErrorFS) ReadDir(dir string) ([]os.DirEntry, error) {
	if err := e.Inject(Op{OpReadDir, dir}); err != nil {
		return nil, err
	}
	return e.inner.ReadDir(dir)
}

// ReadFile implements FS.
func (e *ErrorFS) ReadFile(name string) ([]byte, error) {
	if err := e.Inject(Op{OpReadFile, name}); err != nil {
		return nil, err
	}
	return e.inner.ReadFile(name)
}

// Create implements FS.
func (e *ErrorFS) Create(name string, perm os.FileMode) (File, error) {
	if err := e.Inject(Op{OpCreate, name}); err != nil {
		return nil, err
	}
	f, err := e.inner.Create(name, perm)
	return e.wrapFile(f, err, name)
}

// CreateExclusive implements FS.
func (e *ErrorFS) CreateExclusive(name string, perm os.FileMode) (File, error) {
	if err := e.Inject(Op{OpCreate, name}); err != nil {
		return nil, err
	}
	f, err := e.inner.CreateExclusive(name, perm)
	return e.wrapFile(f, err, name)
}

// OpenReadWrite implements FS.
func (e *ErrorFS) OpenReadWrite(name string) (File, error) {
	if err := e.Inject(Op{OpOpen, name}); err != nil {
		return nil, err
	}
	f, err := e.inner.OpenReadWrite(name)
	return e.wrapFile(f, err, name)
}

// OpenDir implements FS.
func (e *ErrorFS) OpenDir(dir string) (File, error) {
	if err := e.Inject(Op{OpOpen, dir}); err != nil {
		return nil, err
	}
	f, err := e.inner.OpenDir(dir)
	return e.wrapFile(f, err, dir)
}

// Rename implements FS.
func (e *ErrorFS) Rename(oldpath, newpath string) error {
	if err := e.Inject(Op{OpRename, oldpath}); err != nil {
		return err
	}
	return e.inner.Rename(oldpath, newpath)
}

// Remove implements FS.
func (e *ErrorFS) Remove(name string) error {
	if err := e.Inject(Op{OpRemove, name}); err != nil {
		return err
	}
	return e.inner.Remove(name)
}

func (e *ErrorFS) wrapFile(f File, err error, path string) (File, error) {
	if err != nil {
		return nil, err
	}
	return &errorFile{inner: f, fs: e, path: path}, nil
}

// errorFile is a File of an ErrorFS.
type errorFile struct {
	inner File
	fs    *ErrorFS
	path  string
}

// Write fails when the injector says so, else writes to the wrapped file.
func (f *errorFile) Write(p []byte) (int, error) {
	if err := f.fs.Inject(Op{OpWrite, f.path}); err != nil {
		return 0, err
	}
	return f.inner.Write(p)
}

// Sync fails when the injector says so, else syncs the wrapped file.
func (f *errorFile) Sync() error {
	if err := f.fs.Inject(Op{OpSync, f.path}); err != nil {
		return err
	}
	return f.inner.Sync()
}

// Truncate fails when the injector says so, else truncates the wrapped file.
func (f *errorFile) Truncate(size int64) error {
	if err := f.fs.Inject(Op{OpTruncate, f.path}); err != nil {
		return err
	}
	return f.inner.Truncate(size)
}

// Close always closes the inner file, so that an injected failure leaks
// no descriptor, then reports the injected error if any.
func (f *errorFile) Close() error {
	err := f.inner.Close()
	if ierr := f.fs.Inject(Op{OpClose, f.path}); ierr != nil {
		return ierr
	}
	return err
}
