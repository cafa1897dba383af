package snapshot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"marketd/core"
	"marketd/internal/vfs"
)

// File names: snapshot-<From, 20 digits>.snap, and .tmp while written.
const (
	namePrefix = "snapshot-"
	nameSuffix = ".snap"
	tmpSuffix  = ".tmp"
	badSuffix  = ".bad" // a damaged snapshot set aside by Recover
	// spareName is an old snapshot kept to be written over (createTemp).
	spareName = namePrefix + "spare" + tmpSuffix
)

func fileName(from uint64) string { return fmt.Sprintf("%s%020d%s", namePrefix, from, nameSuffix) }

// parseName returns the From of a snapshot file name.
func parseName(name string) (uint64, bool) {
	if !strings.HasPrefix(name, namePrefix) || !strings.HasSuffix(name, nameSuffix) {
		return 0, false
	}
	from, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, namePrefix), nameSuffix), 10, 64)
	return from, err == nil
}

// filePerm is the permission of a snapshot file.
const filePerm = 0o640

// Durability is what publishing a snapshot needs from the log.
type Durability interface {
	// WaitDurable returns once every record up to seq is durable.
	WaitDurable(ctx context.Context, seq uint64) error
}

// crcWriter computes the CRC of everything written through it and paces
// the file's writeback (writeback.go).
type crcWriter struct {
	w       vfs.File
	crc     hash.Hash32
	wb      *writeback
	written int64 // bytes written through it
}

// Write adds p to the CRC and writes it to the file.
func (c *crcWriter) Write(p []byte) (int, error) {
	c.crc.Write(p)
	n, err := c.w.Write(p)
	c.written += int64(n)
	if err != nil {
		return n, err
	}
	return n, c.wb.wrote(c.written)
}

// write captures st into dir as the snapshot for from: written under a
// temporary name, the log awaited through the snapshot's highest LSN,
// fsynced, renamed into place, and the directory fsynced. A failure removes
// the temporary file. sizeBytes is the file's size. pace, when not nil,
// rests after each chunk (pace.go). spare, when not "", names a file to
// write the snapshot over if it exists (createTemp).
func write(ctx context.Context, fsys vfs.FS, dir string, st *core.State, log Durability, from uint64, now time.Time, chunkObjects int, pace *pacer, spare string) (h Header, sizeBytes int64, err error) {
	final := filepath.Join(dir, fileName(from))
	tmp := final + tmpSuffix
	f, recycled, err := createTemp(fsys, tmp, spare)
	if err != nil {
		return Header{}, 0, fmt.Errorf("snapshot: create %s: %w", tmp, err)
	}
	closed, renamed := false, false
	defer func() {
		if err != nil && !closed {
			err = errors.Join(err, f.Close())
		}
		if err != nil && !renamed {
			err = errors.Join(err, fsys.Remove(tmp))
		}
	}()
	// The walk, the encoding and the writes are CPU work, done on a
	// thread of the snapshot's own when pace lowers it (priority.go),
	// with the writeback's waits (writeback.go) among them. The cut of the
	// spare, the file's fsync and the renames stay on the caller's thread:
	// a truncate opens a journal handle that a log fsync's commit may wait
	// for. (strace, which the kill tests of cmd/marketd use, counts a
	// call's invocations per thread, so they also keep their counts.)
	var through, chunks uint64
	fill := func() {
		through, chunks, sizeBytes, err = fillTemp(ctx, f, st, from, now, chunkObjects, pace)
	}
	if pace.ownThread() {
		onOwnThread(fill)
	} else {
		fill()
	}
	if err != nil {
		return Header{}, 0, fmt.Errorf("snapshot: write %s: %w", tmp, err)
	}
	if recycled {
		// What the spare held past the snapshot.
		if err := f.Truncate(sizeBytes); err != nil {
			return Header{}, 0, fmt.Errorf("snapshot: write %s: cut the spare: %w", tmp, err)
		}
	}
	// The snapshot holds changes up to Through: it may replace the log only
	// once the log itself is durable that far.
	if err := log.WaitDurable(ctx, through); err != nil {
		return Header{}, 0, fmt.Errorf("snapshot: wait for the log through %d: %w", through, err)
	}
	if err := f.Sync(); err != nil {
		return Header{}, 0, fmt.Errorf("snapshot: fsync %s: %w", tmp, err)
	}
	closed = true
	if err := f.Close(); err != nil {
		return Header{}, 0, fmt.Errorf("snapshot: close %s: %w", tmp, err)
	}
	if err := fsys.Rename(tmp, final); err != nil {
		return Header{}, 0, fmt.Errorf("snapshot: rename %s: %w", tmp, err)
	}
	renamed = true
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return Header{}, 0, err
	}
	return Header{From: from, Through: through, CreatedAt: now.UTC(), Chunks: chunks}, sizeBytes, nil
}

// fillTemp writes the snapshot of st into f: the header, the chunks of
// st's Capture, and the trailer. It returns the chunks' highest LSN, their
// count and the file's size.
func fillTemp(ctx context.Context, f vfs.File, st *core.State, from uint64, now time.Time, chunkObjects int, pace *pacer) (through, chunks uint64, size int64, err error) {
	cw := &crcWriter{w: f, crc: crc32.New(castagnoli), wb: newWriteback(f)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	var buf []byte
	buf = appendHeader(buf[:0], from, now)
	if _, err := bw.Write(buf); err != nil {
		return 0, 0, 0, err
	}
	through, err = st.Capture(chunkObjects, func(rec *core.Record) (err error) {
		chunks++
		pace.accounts(len(rec.Accounts) > 0)
		// A chunk over the record limits fails this snapshot, not the
		// process: the log keeps everything and the next snapshot may be
		// taken after a fix. Capture's estimates keep chunks far below the
		// limits; this check, and the recover behind it for the codec's
		// other assertions, are the pair of that bound.
		if err := core.CheckRecordSize(rec); err != nil {
			return fmt.Errorf("snapshot: chunk %d: %w", chunks, err)
		}
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("snapshot: encode chunk %d: %v", chunks, r)
			}
		}()
		buf = appendChunk(buf[:0], chunks, rec)
		if _, err := bw.Write(buf); err != nil {
			return err
		}
		// Capture holds no lock while it hands over a chunk: resting here
		// holds up nothing but the snapshot.
		return pace.rest(ctx)
	})
	if err != nil {
		return 0, 0, 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, 0, 0, err
	}
	if size, err = endFile(f, cw, buf, through, chunks); err != nil {
		return 0, 0, 0, err
	}
	return through, chunks, size, nil
}

// endFile writes the trailer after what cw wrote to f (buf is scratch
// space) and returns the file's size.
func endFile(f vfs.File, cw *crcWriter, buf []byte, through, chunks uint64) (int64, error) {
	buf = appendTrailer(buf[:0], through, chunks, 0)
	crc := crc32.Update(cw.crc.Sum32(), castagnoli, buf[:len(buf)-4])
	buf = appendTrailer(buf[:0], through, chunks, crc)
	if _, err := f.Write(buf); err != nil {
		return 0, err
	}
	return cw.written + int64(len(buf)), nil
}

// createTemp creates the temporary file tmp: from spare, when that file
// exists, renamed to tmp and written over in place, so that the snapshot
// reuses blocks already allocated instead of the file system freeing an
// old snapshot's and allocating new ones while trading goes on
// (docs/PERFORMANCE.md, "The old snapshot kept as a spare"). recycled
// says it was: the caller cuts the file to what it wrote.
func createTemp(fsys vfs.FS, tmp, spare string) (f vfs.File, recycled bool, err error) {
	if spare != "" {
		switch err := fsys.Rename(spare, tmp); {
		case err == nil:
			f, err := fsys.OpenReadWrite(tmp)
			if err != nil {
				return nil, false, errors.Join(fmt.Errorf("open the spare: %w", err), fsys.Remove(tmp))
			}
			return f, true, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, false, err
		}
	}
	f, err = fsys.Create(tmp, filePerm)
	return f, false, err
}
