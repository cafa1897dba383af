package dirlock_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"marketd/internal/dirlock"
)

// TestLockModes walks the pairs of locks: two locks on one directory
// conflict unless both are shared. Locks of one process conflict too,
// because each holds its own open file description.
func TestLockModes(t *testing.T) {
	for _, tc := range []struct {
		name          string
		first, second bool // exclusive?
		conflict      bool
	}{
		{"exclusive then exclusive", true, true, true},
		{"exclusive then shared", true, false, true},
		{"shared then exclusive", false, true, true},
		{"shared then shared", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, dirlock.FileName), nil, 0o640); err != nil {
				t.Fatal(err)
			}
			take := func(excl bool) (*dirlock.Lock, error) {
				if excl {
					return dirlock.Exclusive(dir)
				}
				return dirlock.Shared(dir)
			}
			l1, err := take(tc.first)
			if err != nil {
				t.Fatal(err)
			}
			l2, err := take(tc.second)
			if tc.conflict != errors.Is(err, dirlock.ErrLocked) {
				t.Fatalf("second lock: %v, want conflict %v", err, tc.conflict)
			}
			if err := errors.Join(l2.Release(), l1.Release()); err != nil {
				t.Fatal(err)
			}
			// Released: an exclusive lock can be taken again.
			l3, err := dirlock.Exclusive(dir)
			if err != nil {
				t.Fatalf("after release: %v", err)
			}
			if err := l3.Release(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSharedWritesNothing: a shared lock of a directory that has no LOCK
// file creates nothing.
func TestSharedWritesNothing(t *testing.T) {
	dir := t.TempDir()
	l, err := dirlock.Shared(dir)
	if err != nil || l != nil {
		t.Fatalf("Shared of a fresh dir: %v, %v; want nil, nil", l, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("Shared created %v", ents)
	}
	if _, err := dirlock.Shared(filepath.Join(dir, "missing")); err != nil {
		t.Fatalf("Shared of a missing dir: %v", err)
	}
}
