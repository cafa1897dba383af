package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"marketd/internal/vfs"
)

// shrinkFS is a CrashFS whose files opened for writing record every size
// they are truncated to.
type shrinkFS struct {
	*vfs.CrashFS
	sizes []int64
}

type shrinkFile struct {
	vfs.File
	fs *shrinkFS
}

func (s *shrinkFS) OpenReadWrite(name string) (vfs.File, error) {
	f, err := s.CrashFS.OpenReadWrite(name)
	return shrinkFile{File: f, fs: s}, err
}

func (f shrinkFile) Truncate(size int64) error {
	f.fs.sizes = append(f.fs.sizes, size)
	return f.File.Truncate(size)
}

// TestRemoveStepped checks that an old snapshot is shrunk to multiples of
// removeStepBytes, one step at a time down to empty, and then removed,
// leaving nothing behind under either name.
func TestRemoveStepped(t *testing.T) {
	const step = removeStepBytes
	cases := []struct {
		size int64
		want []int64
	}{
		{0, nil},
		{1, []int64{0}},
		{step, []int64{0}},
		{step + 1, []int64{step, 0}},
		{3*step - 5, []int64{2 * step, step, 0}},
		{3 * step, []int64{2 * step, step, 0}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.size), func(t *testing.T) {
			sfs := &shrinkFS{CrashFS: vfs.NewCrashFS()}
			dir := "/snaps"
			if err := sfs.MkdirAll(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			name := fileName(7)
			if err := vfs.WriteFileSync(sfs, filepath.Join(dir, name), make([]byte, c.size), filePerm); err != nil {
				t.Fatal(err)
			}
			if err := removeStepped(context.Background(), sfs, dir, name); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sfs.sizes, c.want) {
				t.Errorf("size %d: truncated to %v, want %v", c.size, sfs.sizes, c.want)
			}
			for _, n := range []string{name, name + tmpSuffix} {
				if _, err := sfs.ReadFile(filepath.Join(dir, n)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("size %d: %s left behind (err %v)", c.size, n, err)
				}
			}
		})
	}
}

// TestRemoveSteppedCancelled checks that a removal cut short by ctx still
// removes the file, and that the file never kept a snapshot's name once
// shrinking began.
func TestRemoveSteppedCancelled(t *testing.T) {
	sfs := &shrinkFS{CrashFS: vfs.NewCrashFS()}
	dir := "/snaps"
	if err := sfs.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	name := fileName(7)
	if err := vfs.WriteFileSync(sfs, filepath.Join(dir, name), make([]byte, 3*removeStepBytes), filePerm); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := removeStepped(ctx, sfs, dir, name); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	froms, err := list(sfs, dir)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := sfs.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(froms) != 0 || len(ents) != 0 {
		t.Fatalf("left behind: %d snapshots, %d files", len(froms), len(ents))
	}
}
