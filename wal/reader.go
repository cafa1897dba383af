package wal

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"marketd/core"
	"marketd/internal/vfs"
)

// TornTail describes the end of a last segment that is not a whole valid
// frame: what Open would cut (after copying the file aside), reported by a
// Reader without cutting it.
type TornTail struct {
	File   string // path of the segment
	Offset int    // byte offset of the first bad entry
	Seq    uint64 // the seq that entry would have had
	Bytes  int    // bytes from Offset to the end of the file
	Cause  string // why the entry is bad
}

// Reader reads a log directory without changing anything in it, for the
// offline checker and the dump of records: Open cuts a torn tail and
// tidwall's own Open finishes interrupted truncations and creates a first
// segment, all of which write. A Reader finds the segments as tidwall would
// (listSegments), checks the last one as repair does, and reports a torn
// tail instead of cutting it; corruption elsewhere in the last segment is
// an error wrapping ErrCorrupt, as at Open, and corruption in older
// segments is found by Replay.
type Reader struct {
	fsys        vfs.FS
	dir         string
	segs        []segmentFile
	first, last uint64
	lastLen     int // bytes of the last segment before a torn tail
	torn        *TornTail
}

// OpenReader opens the log in dir read-only; fsys nil means vfs.Default().
// A missing directory reads as an empty log.
func OpenReader(fsys vfs.FS, dir string) (*Reader, error) {
	if fsys == nil {
		fsys = vfs.Default()
	}
	r := &Reader{fsys: fsys, dir: dir, first: 1, last: 0, lastLen: -1}
	segs, err := listSegments(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		return r, nil
	}
	r.segs = segs
	lastSeg := segs[len(segs)-1]
	path := filepath.Join(dir, lastSeg.name)
	data, err := fsys.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("wal: read %s: %w", path, err)
	}
	off, seq, badErr, err := checkTail(path, data, lastSeg.index)
	if err != nil {
		return nil, err
	}
	if badErr != nil {
		r.torn = &TornTail{File: path, Offset: off, Seq: seq, Bytes: len(data) - off, Cause: badErr.Error()}
		r.lastLen = off
	}
	r.first, r.last = segs[0].index, seq-1
	if r.first > r.last+1 {
		return nil, fmt.Errorf("wal: %s: first segment starts at %d, after the last record %d: %w", dir, r.first, r.last, ErrCorrupt)
	}
	return r, nil
}

// FirstSeq returns the first record's sequence number; LastSeq()+1 when the
// log is empty.
func (r *Reader) FirstSeq() uint64 { return r.first }

// LastSeq returns the last whole record's sequence number, 0 when none.
func (r *Reader) LastSeq() uint64 { return r.last }

// Torn returns the torn tail of the last segment, if it has one.
func (r *Reader) Torn() (TornTail, bool) {
	if r.torn == nil {
		return TornTail{}, false
	}
	return *r.torn, true
}

// Segments returns the paths of the segment files, in order.
func (r *Reader) Segments() []string {
	out := make([]string, len(r.segs))
	for i, s := range r.segs {
		out[i] = filepath.Join(r.dir, s.name)
	}
	return out
}

// Replay calls fn with every record from seq from through LastSeq, verified
// as Log.Replay verifies them; a torn tail is not read. from must be
// between FirstSeq and LastSeq+1, or Replay fails with ErrOutOfRange. fn
// must not keep rec after it returns.
func (r *Reader) Replay(from uint64, fn func(seq uint64, rec *core.Record) error) error {
	return r.ReplayPrepared(from, nil, withoutPrepared(fn))
}

// ReplayPrepared is Replay with records prepared as Log.ReplayPrepared
// prepares them.
func (r *Reader) ReplayPrepared(from uint64, newPrepare func() func(*core.Record, *core.Prepared), fn func(seq uint64, rec *core.Record, p *core.Prepared) error) error {
	if from < r.first || from > r.last+1 {
		return fmt.Errorf("wal: replay from %d: log holds %d..%d: %w", from, r.first, r.last, ErrOutOfRange)
	}
	if from == r.last+1 {
		return nil
	}
	return replaySegments(r.fsys, r.dir, r.segs, r.lastLen, r.last, from, newPrepare, fn)
}
