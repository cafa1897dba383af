package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"marketd/internal/vfs"
)

// Removing an old snapshot while trading (docs/PERFORMANCE.md, "The second
// after a snapshot"). The file system is mounted with online discard: the
// blocks of a removed file are discarded when the journal transaction that
// freed them commits, and that commit is the one the log's next fsync waits
// for. Removing a 150-200 MB snapshot at once put 150-330 MB of discards
// (30-138 ms of the disk's time, /proc/diskstats) in front of the log's
// fsync. So a periodic snapshot's old files are shrunk a step at a time,
// with a rest after each, and then removed: each log commit then waits for
// the discard of a few MiB at most.
const (
	// removeStepBytes is one step: the disk discarded 2.4-5 GB/s here, so
	// a step's discard takes a few milliseconds.
	removeStepBytes = 8 << 20
	// removeStepRest is the rest after each step, in which the log commits
	// several times: 25 steps for a 200 MB snapshot, about half a second.
	removeStepRest = 20 * time.Millisecond
)

// removeStepped removes the snapshot file name of dir: renamed first to its
// temporary name (which recovery removes, so that a crash in the middle
// leaves no snapshot cut short under a snapshot's name), then shrunk by
// removeStepBytes at a time with a rest after each, then removed. When ctx
// is done meanwhile it removes the rest at once and returns ctx's error.
func removeStepped(ctx context.Context, fsys vfs.FS, dir, name string) error {
	path := filepath.Join(dir, name)
	size, err := fileSize(fsys, dir, name)
	if err != nil {
		return err
	}
	tmp := path + tmpSuffix
	if err := fsys.Rename(path, tmp); err != nil {
		return fmt.Errorf("snapshot: rename %s to remove it: %w", path, err)
	}
	f, err := fsys.OpenReadWrite(tmp)
	if err != nil {
		return errors.Join(fmt.Errorf("snapshot: open %s to remove it: %w", tmp, err), removeFile(fsys, tmp))
	}
	// Shrink to a multiple of the step first, then a step at a time.
	for size > 0 {
		size = (size - 1) / removeStepBytes * removeStepBytes
		if err := f.Truncate(size); err != nil {
			return errors.Join(fmt.Errorf("snapshot: shrink %s to %d bytes: %w", tmp, size, err), f.Close(), removeFile(fsys, tmp))
		}
		if size == 0 {
			break
		}
		if err := sleep(ctx, removeStepRest); err != nil {
			return errors.Join(fmt.Errorf("snapshot: remove %s: %w", tmp, err), f.Close(), removeFile(fsys, tmp))
		}
	}
	if err := f.Close(); err != nil {
		return errors.Join(fmt.Errorf("snapshot: close %s: %w", tmp, err), removeFile(fsys, tmp))
	}
	return removeFile(fsys, tmp)
}

// removeFile removes name, with the error wrapped.
func removeFile(fsys vfs.FS, name string) error {
	if err := fsys.Remove(name); err != nil {
		return fmt.Errorf("snapshot: remove %s: %w", name, err)
	}
	return nil
}

// fileSize returns the size of the file name in dir, from its listing.
func fileSize(fsys vfs.FS, dir, name string) (int64, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("snapshot: list %s: %w", dir, err)
	}
	for _, e := range ents {
		if e.Name() != name {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return 0, fmt.Errorf("snapshot: size of %s: %w", filepath.Join(dir, name), err)
		}
		return info.Size(), nil
	}
	return 0, fmt.Errorf("snapshot: size of %s: %w", filepath.Join(dir, name), os.ErrNotExist)
}
