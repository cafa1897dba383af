package snapshot

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"time"

	"marketd/internal/vfs"
)

// A snapshot's disk work without a state (docs/PERFORMANCE.md, "A floor
// for the 1,000,000-account row"). The floors marketd is compared with
// (bench/baseline) hold no accounts, so a load run of marketd with a
// million of them, a snapshot every 15 s, had no floor measured beside it:
// WriteSized gives one the same writes, written the way a periodic
// snapshot's are (write), so that the disk's share of the row's tail is
// measured apart from marketd's.

// sizedBlockBytes is the size of each write of WriteSized: that of the
// buffer a snapshot's chunks are written through (fillTemp).
const sizedBlockBytes = 1 << 20

// WriteSized writes a file of size bytes into dir the way a periodic
// snapshot writes its own (write, fillTemp): under a temporary name,
// over the spare when there is one (createTemp), written back in steps
// as it is written (writeback.go), on a thread of its own at nice when
// nice is above 0 (priority.go), spread evenly over spread when it is
// above 0 (a block is written no sooner than its share of spread after
// the first), then fsynced, renamed to the name of a
// snapshot from seq and the directory fsynced; then, as a paced retention
// does (Manager.retain), the newest two such files are kept, the next
// older one becomes the spare and the rest are removed. The bytes are not
// a snapshot: Recover sets such a file aside as damaged, so dir must be
// no server's.
func WriteSized(ctx context.Context, fsys vfs.FS, dir string, seq uint64, size int64, nice int, spread time.Duration) error {
	if size < 0 {
		return fmt.Errorf("snapshot: sized write of %d bytes", size)
	}
	final := filepath.Join(dir, fileName(seq))
	tmp := final + tmpSuffix
	spare := filepath.Join(dir, spareName)
	f, recycled, err := createTemp(fsys, tmp, spare)
	if err != nil {
		return fmt.Errorf("snapshot: create %s: %w", tmp, err)
	}
	pace := newPacer(DefaultCPUShare, nice)
	fill := func() {
		pace.accounts(true)
		err = fillSized(ctx, f, size, spread)
	}
	if pace.ownThread() {
		onOwnThread(fill)
	} else {
		fill()
	}
	if err == nil && recycled {
		err = f.Truncate(size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, final)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("snapshot: sized write of %s: %w", tmp, err), fsys.Remove(tmp))
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return err
	}
	return rotateSized(fsys, dir, spare)
}

// fillSized writes size bytes of one random block, repeated, to f,
// written back in steps (writeback.go), spread over spread. Random, so that no layer under
// the file system writes less than a snapshot's bytes.
func fillSized(ctx context.Context, f vfs.File, size int64, spread time.Duration) error {
	block := make([]byte, sizedBlockBytes)
	for i := range block {
		block[i] = byte(rand.Uint32())
	}
	wb := newWriteback(f)
	start := time.Now()
	for written := int64(0); written < size; {
		if spread > 0 {
			due := start.Add(time.Duration(float64(spread) * float64(written) / float64(size)))
			if err := sleep(ctx, time.Until(due)); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		n, err := f.Write(block[:min(int64(len(block)), size-written)])
		written += int64(n)
		if err != nil {
			return err
		}
		if err := wb.wrote(written); err != nil {
			return err
		}
	}
	return nil
}

// rotateSized keeps the newest two snapshot files of dir, makes the next
// older one the spare and removes the others.
func rotateSized(fsys vfs.FS, dir, spare string) error {
	froms, err := list(fsys, dir)
	if err != nil || len(froms) <= 2 {
		return err
	}
	if err := fsys.Rename(filepath.Join(dir, fileName(froms[2])), spare); err != nil {
		return fmt.Errorf("snapshot: keep a sized file as the spare: %w", err)
	}
	var errs []error
	for _, f := range froms[3:] {
		errs = append(errs, fsys.Remove(filepath.Join(dir, fileName(f))))
	}
	return errors.Join(errs...)
}
