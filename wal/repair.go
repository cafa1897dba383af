package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"marketd/internal/vfs"
	"marketd/wal/record"
)

// maxBrokenCopies bounds the NAME.broken, NAME.broken.1, ... copies kept
// of one segment; past it, repair refuses instead of overwriting evidence.
const maxBrokenCopies = 100

// brokenFilePerm is the permission of the copy of a damaged segment.
const brokenFilePerm = 0o640

// repairResult says what repair did.
type repairResult struct {
	repaired bool  // a torn tail was cut
	cutBytes int64 // bytes cut from the last segment
}

// repair makes the last segment of the log in dir readable by tidwall and
// by Replay, before tidwall opens it: tidwall refuses a torn last entry
// (ErrCorrupt from Open) and silently accepts zero-filled or bit-flipped
// bytes, since it has no checksum.
//
// It scans the segment that tidwall will take as its last (see
// listSegments) frame by frame. At the first entry that is not a whole,
// valid frame at the expected sequence number:
//
//   - if the entry is itself a whole frame (magic and CRC right) that is
//     misplaced or of another format version, nothing was torn: repair
//     refuses;
//   - if a valid frame with that sequence number or a later one, or a whole
//     frame of another version, starts anywhere after it in the file, the
//     damage is not at the tail: the log is corrupt and repair refuses,
//     naming the file and byte offset;
//   - otherwise the tail is torn (a write that was cut short, or bytes the
//     file system zero-filled or never wrote): repair copies the file aside
//     as NAME.broken, truncates it at the end of the last good frame, and
//     fsyncs the file and the directory.
//
// A torn tail is only ever part of a batch whose fsync had not returned,
// so no acknowledged record is cut, except when damage hits the last
// acknowledged record itself and nothing after it: that cannot be told
// from a torn write, and etcd makes the same choice.
//
// An emptied last segment is left in place as an empty file: tidwall
// handles it as it handles the fresh segment it creates when it cycles,
// with the log ending at the previous segment's last entry.
func repair(fsys vfs.FS, dir string, logger *slog.Logger) (repairResult, error) {
	segs, err := listSegments(fsys, dir)
	if err != nil || len(segs) == 0 {
		return repairResult{}, err
	}
	last := segs[len(segs)-1]
	path := filepath.Join(dir, last.name)
	data, err := fsys.ReadFile(path)
	if err != nil {
		return repairResult{}, fmt.Errorf("wal: repair: read %s: %w", path, err)
	}

	off, seq, badErr, err := checkTail(path, data, last.index)
	if err != nil || badErr == nil {
		return repairResult{}, err
	}

	broken, err := copyAside(fsys, path, data)
	if err != nil {
		return repairResult{}, err
	}
	if err := truncateFile(fsys, path, int64(off)); err != nil {
		return repairResult{}, err
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return repairResult{}, err
	}
	cut := int64(len(data) - off)
	logger.Warn("wal: cut torn tail of the log",
		"file", path, "offset", off, "seq", seq, "bytes_cut", cut, "copy", broken, "cause", badErr.Error())
	return repairResult{repaired: true, cutBytes: cut}, nil
}

// checkTail finds where the last segment's valid frames end. badErr is nil
// when every entry is a valid frame; otherwise off and seq are the byte
// offset and expected seq of the first bad entry, badErr says why it is bad
// and the entries from off on are a torn tail; err reports damage that is
// not a torn tail (see repair), which nothing may cut.
func checkTail(path string, data []byte, first uint64) (off int, seq uint64, badErr, err error) {
	off, seq, badErr = scanFrames(data, first)
	if badErr == nil {
		return off, seq, nil, nil
	}
	if entry, n := nextEntry(data[off:]); n > 0 && record.FrameIntact(entry) {
		// Written whole, so not torn: misplaced, or of another version.
		return off, seq, badErr, fmt.Errorf("wal: %s: frame at byte %d (seq %d) is whole but unreadable: %w",
			path, off, seq, badErr)
	}
	if at, ok := findValidFrame(data, off+1, seq); ok {
		return off, seq, badErr, fmt.Errorf("wal: %s: bad frame at byte %d (seq %d: %v) is followed by a whole frame at byte %d: %w",
			path, off, seq, badErr, at, ErrCorrupt)
	}
	return off, seq, badErr, nil
}

// scanFrames checks the entries of a segment whose first index is first.
// It returns nil when every entry is a valid frame at its index; otherwise
// the byte offset and expected seq of the first bad entry, and why it is bad.
func scanFrames(data []byte, first uint64) (off int, seq uint64, err error) {
	seq = first
	for off < len(data) {
		entry, n := nextEntry(data[off:])
		if n == 0 {
			return off, seq, fmt.Errorf("entry of %d bytes does not fit: %w", len(data)-off, ErrCorrupt)
		}
		if _, err := record.DecodeFrameAt(entry, seq); err != nil {
			return off, seq, err
		}
		off += n
		seq++
	}
	return off, seq, nil
}

// findValidFrame looks for a tidwall entry holding a whole frame starting
// at any byte offset from start on: a frame of this version with a sequence
// number of at least minSeq, or an intact frame of another version (whose
// seq it cannot read). Candidates are found by the frame magic: for each
// occurrence, every uvarint length prefix that ends right before it is
// tried.
func findValidFrame(data []byte, start int, minSeq uint64) (at int, ok bool) {
	for p := start + 1; p < len(data); p++ {
		i := bytes.IndexByte(data[p:], record.FrameMagic0)
		if i < 0 {
			break
		}
		p += i
		for k := 1; k <= binary.MaxVarintLen64 && p-k >= start; k++ {
			size, n := binary.Uvarint(data[p-k : p])
			if n != k || size > uint64(len(data)-p) {
				continue
			}
			frame := data[p : p+int(size)]
			if !record.FrameIntact(frame) {
				continue
			}
			if fr, err := record.DecodeFrame(frame); err != nil || fr.Seq >= minSeq {
				return p - k, true
			}
		}
	}
	return 0, false
}

// copyAside writes data to a new file next to path, NAME.broken or the
// first free NAME.broken.N, and fsyncs it, so that the evidence of a repair
// is durable before the original is cut.
func copyAside(fsys vfs.FS, path string, data []byte) (string, error) {
	for i := range maxBrokenCopies {
		name := path + ".broken"
		if i > 0 {
			name += "." + strconv.Itoa(i)
		}
		f, err := fsys.CreateExclusive(name, brokenFilePerm)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("wal: repair: create %s: %w", name, err)
		}
		if _, err := f.Write(data); err != nil {
			_ = f.Close() // the write error is the one to report
			return "", fmt.Errorf("wal: repair: write %s: %w", name, err)
		}
		if err := f.Sync(); err != nil {
			_ = f.Close() // the sync error is the one to report
			return "", fmt.Errorf("wal: repair: sync %s: %w", name, err)
		}
		if err := f.Close(); err != nil {
			return "", fmt.Errorf("wal: repair: close %s: %w", name, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("wal: repair: %s: %d copies of damaged segments already exist: %w", path, maxBrokenCopies, os.ErrExist)
}

// truncateFile cuts the file at size and fsyncs it.
func truncateFile(fsys vfs.FS, path string, size int64) error {
	f, err := fsys.OpenReadWrite(path)
	if err != nil {
		return fmt.Errorf("wal: repair: open %s: %w", path, err)
	}
	if err := f.Truncate(size); err != nil {
		_ = f.Close() // the truncate error is the one to report
		return fmt.Errorf("wal: repair: truncate %s at %d: %w", path, size, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close() // the sync error is the one to report
		return fmt.Errorf("wal: repair: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("wal: repair: close %s: %w", path, err)
	}
	return nil
}
