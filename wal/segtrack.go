package wal

import (
	"math/bits"
	"os"
	"path/filepath"
)

// The directory fsync after a commit is needed only when the commit's
// records went into a segment file whose directory entry is not yet durable:
// tidwall creates a segment file inside WriteBatch and never fsyncs the
// directory. Any other directory fsync finds nothing to commit but still
// costs a device flush: 50-57 us at the median and 1.5-5 ms at the p99 here,
// against 200 us for the segment's own fsync (docs/PERFORMANCE.md). So the
// writer fsyncs the directory only after a commit that may have written to
// a new segment, and finds out which commits those are from the segment
// file's size, not by predicting tidwall's rule:
//
//   - it knows the current segment file and the size it had after the last
//     commit, and adds to that size the bytes of each batch as tidwall
//     stores them (uvarint length, then the frame);
//   - after the write, a size equal to that sum means every byte of the
//     batch went into this file, which was there before the batch: nothing
//     new needs the directory;
//   - anything else (a smaller size because tidwall moved on to a new
//     file mid-batch, a file that is gone after a truncation, a failed stat,
//     nothing known yet after Open) means the directory is fsynced and the
//     current segment read again.
//
// The size is read from tidwall's own record of the file where its layout
// is known (segbuf.go): the segment it is writing and the bytes of its
// entries, len(ebuf), which tidwall appends to before each write of the
// file and which hold exactly the file's bytes once WriteBatch has
// succeeded (TestSegmentTrackerMatchesFile). Else the file is asked with a
// stat, which cost a system call per commit, about 1.7% of the server's
// CPU in the closed loop (docs/PERFORMANCE.md, "The segment's stat per
// commit"). With tidwall's record, a new segment is also told by the
// record itself: tidwall makes a new one for each segment it starts. The
// record does not name the file for good, though: a truncation can rename
// the tail's file in place, under the same record and with the same
// length. That case is covered the way it was with the stat: a truncation
// always fsyncs the directory and reloads the tracker (truncate.go).
//
// A new segment that tidwall creates after the last entry of a batch
// (when that entry fills the old one) holds none of the batch. With
// tidwall's record, the commit that filled the old segment sees the new
// tail and fsyncs the directory at once; with the stat, the entry is made
// durable by the next commit, the first to write to it, before any of that
// commit's records is acknowledged. Either way there is one directory
// fsync per segment. A crash before it leaves an empty last segment, as a
// crash between tidwall's creation of a file and the directory fsync
// always could.

// segmentTracker is the writer's view of tidwall's current segment file.
// Owned by the writer goroutine.
type segmentTracker struct {
	path string // "" when unknown: the next commit fsyncs the directory
	size int64  // its size after the last commit
	// seg is tidwall's record of that segment when its layout is known
	// (nil: the file is asked with a stat).
	seg *twSegment
}

// tidwallEntryBytes is the size of frame as a tidwall entry in a segment.
func tidwallEntryBytes(frame []byte) int {
	n := uint64(len(frame))
	return (bits.Len64(n|1)+6)/7 + len(frame)
}

// unchanged reports whether a batch of batchBytes (as tidwall stores them)
// went whole into the segment file that was current before it; tail is
// tidwall's tail segment now (segmentBuffers.tailSegment).
func (t *segmentTracker) unchanged(tail *twSegment, batchBytes int) bool {
	if t.path == "" {
		return false
	}
	if t.seg != nil {
		want := t.size + int64(batchBytes)
		if tail != t.seg || int64(len(tail.ebuf)) != want {
			return false
		}
		t.size = want
		return true
	}
	fi, err := os.Stat(t.path)
	if err != nil || fi.Size() != t.size+int64(batchBytes) {
		return false
	}
	t.size = fi.Size()
	return true
}

// reload makes tidwall's current segment file the current one, with its
// size now; it forgets the current segment when it cannot tell, so that
// the next commit fsyncs the directory again. Where tidwall's layout is
// known, the file and its size are tidwall's record of its tail
// (segbuf.go); else the file is the last segment of dir (listing the
// directory costs the writer a read of every segment's name, and the
// directory holds every segment since the last truncation), asked with a
// stat. Tidwall writes its files through package os, so they are read
// here the same way.
func (t *segmentTracker) reload(l *Log) {
	t.path, t.size, t.seg = "", 0, nil
	// The tail's file may be another now (tailsync.go); a failed close
	// loses nothing, as the file was fsynced before.
	_ = l.tail.close()
	if tail := l.segBuf.tailSegment(); tail != nil {
		t.path, t.size, t.seg = tail.path, int64(len(tail.ebuf)), tail
		return
	}
	segs, err := listSegments(l.opts.FS, l.dir)
	if err != nil || len(segs) == 0 {
		return
	}
	path := filepath.Join(l.dir, segs[len(segs)-1].name)
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	t.path, t.size = path, fi.Size()
}
