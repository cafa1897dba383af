package wal

import (
	"fmt"
	"path/filepath"

	"marketd/internal/vfs"
)

// CopyResult says what CopyLog copied.
type CopyResult struct {
	FirstSeq, LastSeq uint64 // the records the copy holds
	Files             int
	Bytes             int64
}

// CopyLog copies the log in srcDir, from the segment holding seq from (or
// the last one, when from is past the end) to its end, into dstDir, which
// must not hold a log, for an online backup. The log may be appended to
// while it is copied: the copy of the last segment is cut after its last
// whole frame, so that a write in progress is left out rather than torn.
// Every file and dstDir are fsynced. The caller must keep the log from
// being truncated meanwhile (snapshot.Manager.Backup holds the lock that
// snapshots and their truncations take). Damage other than a torn tail in
// the copied last segment is an error wrapping ErrCorrupt.
func CopyLog(fsys vfs.FS, srcDir, dstDir string, from uint64) (CopyResult, error) {
	if fsys == nil {
		fsys = vfs.Default()
	}
	var res CopyResult
	segs, err := listSegments(fsys, srcDir)
	if err != nil {
		return res, err
	}
	if len(segs) == 0 {
		return res, fmt.Errorf("wal: copy %s: no segment: %w", srcDir, ErrOutOfRange)
	}
	i := len(segs) - 1
	for i > 0 && segs[i].index > from {
		i--
	}
	if err := fsys.MkdirAll(dstDir, 0o750); err != nil {
		return res, fmt.Errorf("wal: copy: create %s: %w", dstDir, err)
	}
	res.FirstSeq = segs[i].index
	for ; i < len(segs); i++ {
		seg := segs[i]
		src := filepath.Join(srcDir, seg.name)
		data, err := fsys.ReadFile(src)
		if err != nil {
			return res, fmt.Errorf("wal: copy: read %s: %w", src, err)
		}
		if i == len(segs)-1 {
			off, seq, _, err := checkTail(src, data, seg.index)
			if err != nil {
				return res, err
			}
			data = data[:off]
			res.LastSeq = seq - 1
		}
		// The copy takes the segment's plain name: an interrupted
		// truncation (.START, .END) was finished by the Open of the live
		// log, and none runs while the caller holds the snapshot lock.
		dst := filepath.Join(dstDir, fmt.Sprintf("%0*d", segmentNameLen, seg.index))
		if err := vfs.WriteFileSync(fsys, dst, data, 0o640); err != nil {
			return res, fmt.Errorf("wal: copy: %w", err)
		}
		res.Files++
		res.Bytes += int64(len(data))
	}
	if err := vfs.SyncDir(fsys, dstDir); err != nil {
		return res, fmt.Errorf("wal: copy: %w", err)
	}
	return res, nil
}
