package vfs_test

import (
	"errors"
	"testing"

	"marketd/internal/vfs"
)

// TestErrorFSInjectors runs the same sequence of operations under each
// injector and lists which of them failed.
func TestErrorFSInjectors(t *testing.T) {
	for _, tc := range []struct {
		name string
		inj  vfs.Injector
		want string // one letter per step: . ok, x failed
	}{
		{"none", nil, "......"},
		{"2nd sync", vfs.FailNth(vfs.Kinds(vfs.OpSync), 2), "...x.."},
		{"from 3rd mutation", vfs.FailFrom(vfs.Mutating, 3), "..xxxx"},
		{"writes under /d/b", vfs.FailFrom(vfs.And(vfs.Kinds(vfs.OpWrite), vfs.Under("/d/b")), 1), "....x."},
		{"any of two", vfs.Any(vfs.FailNth(vfs.Kinds(vfs.OpWrite), 1), vfs.FailNth(vfs.Kinds(vfs.OpRename), 1)), ".x...x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := vfs.NewCrashFS()
			must(t, c.MkdirAll("/d", 0o750))
			e := vfs.NewErrorFS(c, tc.inj)
			fa, err := e.Create("/d/a", 0o640) // create: mutation 1
			must(t, err)
			mustWrite(t, c, "/d/b", "", false)
			fb, err := e.OpenReadWrite("/d/b") // not a mutation
			must(t, err)
			steps := []func() error{
				func() error { return nil },
				func() error { _, err := fa.Write([]byte("x")); return err }, // mutation 2
				func() error { return fa.Sync() },                            // mutation 3, sync 1
				func() error { return vfs.SyncDir(e, "/d") },                 // sync 2
				func() error { _, err := fb.Write([]byte("y")); return err },
				func() error { return e.Rename("/d/a", "/d/c") },
			}
			got := ""
			for _, s := range steps {
				switch err := s(); {
				case err == nil:
					got += "."
				case errors.Is(err, vfs.ErrInjected):
					got += "x"
				default:
					t.Fatalf("unexpected error %v", err)
				}
			}
			if got != tc.want {
				t.Fatalf("failed steps %s, want %s (ops %v)", got, tc.want, e.Ops())
			}
		})
	}
}
