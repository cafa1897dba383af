package wal

import (
	"fmt"
	"path/filepath"
	"sort"

	"marketd/core"
	"marketd/internal/vfs"
)

// Replay calls fn with every record from seq from to the end of the log, in
// order, decoding and verifying each: its frame (magic, version, CRC, seq
// equal to its index, kind equal to the record's) and its record encoding.
// Every segment from the one holding from must hold exactly the entries its
// name and its successor's promise. Any bad entry is corruption: Replay
// stops with an error wrapping ErrCorrupt that names the file, byte offset
// and seq. An error from fn stops Replay and is returned wrapped.
//
// from must be between FirstSeq and LastSeq+1 (which replays nothing), or
// Replay fails with ErrOutOfRange. fn must not keep rec or the slices in
// it after it returns, since their memory is reused for later records; the
// strings and byte slices in it are fn's to keep. Replay reads the files
// itself, not through tidwall (whose Read panics on a segment shorter than
// its successor's name implies), and only before Start: after it, the
// writer owns the files and Replay fails with ErrStarted.
func (l *Log) Replay(from uint64, fn func(seq uint64, rec *core.Record) error) error {
	return l.ReplayPrepared(from, nil, withoutPrepared(fn))
}

// withoutPrepared adapts a Replay callback to ReplayPrepared's.
func withoutPrepared(fn func(uint64, *core.Record) error) func(uint64, *core.Record, *core.Prepared) error {
	return func(seq uint64, rec *core.Record, _ *core.Prepared) error { return fn(seq, rec) }
}

// ReplayPrepared is Replay, preparing each record on the decoding worker
// that decoded it, with a Prepared of its own that fn then receives with
// the record (nil when newPrepare is nil). Each worker calls newPrepare
// once, for the function that prepares the records it decodes, so that
// the function may keep state of its own: recovery passes a
// core.Preparer's Prepare and ApplyPrepared, so that the lookups of a
// record's objects run beside the applying of earlier records. The
// workers run at once, ahead of fn.
func (l *Log) ReplayPrepared(from uint64, newPrepare func() func(*core.Record, *core.Prepared), fn func(seq uint64, rec *core.Record, p *core.Prepared) error) error {
	if l.started.Load() {
		return fmt.Errorf("wal: replay: %w", ErrStarted)
	}
	first, last := l.FirstSeq(), l.LastSeq()
	if from < first || from > last+1 {
		return fmt.Errorf("wal: replay from %d: log holds %d..%d: %w", from, first, last, ErrOutOfRange)
	}
	if from == last+1 {
		return nil
	}
	segs, err := listSegments(l.opts.FS, l.dir)
	if err != nil {
		return err
	}
	return replaySegments(l.opts.FS, l.dir, segs, -1, last, from, newPrepare, fn)
}

// replaySegments replays the records from seq from through last, which
// segs (as listSegments returns them) must hold. lastLen, when not
// negative, is how many bytes of the last segment to read: the reader of
// a log whose torn tail is reported, not cut, stops before it.
func replaySegments(fsys vfs.FS, dir string, segs []segmentFile, lastLen int, last, from uint64,
	newPrepare func() func(*core.Record, *core.Prepared), fn func(uint64, *core.Record, *core.Prepared) error) error {
	// The segment holding from is the last one starting at or before it.
	i := sort.Search(len(segs), func(i int) bool { return segs[i].index > from }) - 1
	if i < 0 {
		return fmt.Errorf("wal: replay from %d: no segment holds it: %w", from, ErrCorrupt)
	}
	p := startReplayPipeline(newPrepare, func(p *replayPipeline) error {
		return scanSegments(fsys, dir, segs, i, lastLen, last, from, p)
	})
	return p.deliver(fn)
}

// scanSegments splits segments segs[i:] into entries and queues those at
// or after from on p; it runs on p's producer. Segment i+1 is read while
// segment i is split: reading a large segment (20 MiB in logs written
// before the default was 1 MiB) takes long enough for the decoding workers
// to run dry otherwise.
func scanSegments(fsys vfs.FS, dir string, segs []segmentFile, i, lastLen int, last, from uint64, p *replayPipeline) error {
	limit := func(i int) int {
		if i == len(segs)-1 {
			return lastLen
		}
		return -1
	}
	next := readSegment(fsys, dir, segs[i], limit(i), p.buffer())
	defer func() {
		if next != nil {
			<-next // the reader's exit
		}
	}()
	for ; i < len(segs); i++ {
		cur := <-next
		next = nil
		end := last + 1 // one past the last seq this segment must hold
		if i+1 < len(segs) {
			end = segs[i+1].index
			next = readSegment(fsys, dir, segs[i+1], limit(i+1), p.buffer())
		}
		err := scanSegment(cur, segs[i], end, from, p)
		cur.buf.release(p) // the producer's hold: the chunks hold theirs
		if err != nil {
			return err
		}
	}
	return nil
}

// segmentData is the content of a segment file, or why it could not be read.
type segmentData struct {
	path string
	buf  *segmentBuffer
	err  error
}

// readerInto is an FS that reads a file into a buffer it is given (the
// os-backed one does): replay then reads every segment into the same few
// buffers.
type readerInto interface {
	ReadFileInto(name string, buf []byte) ([]byte, error)
}

// readSegment reads a segment file into buf, its first maxLen bytes when
// maxLen is not negative, on a goroutine of its own, which sends the
// result on the returned channel and exits; Replay receives it.
func readSegment(fsys vfs.FS, dir string, seg segmentFile, maxLen int, buf *segmentBuffer) <-chan segmentData {
	ch := make(chan segmentData, 1)
	path := filepath.Join(dir, seg.name)
	go func() {
		var data []byte
		var err error
		if r, ok := fsys.(readerInto); ok {
			data, err = r.ReadFileInto(path, buf.data[:0])
		} else {
			data, err = fsys.ReadFile(path)
		}
		if err == nil && maxLen >= 0 && maxLen < len(data) {
			data = data[:maxLen]
		}
		if err != nil {
			err = fmt.Errorf("wal: replay: read %s: %w", path, err)
		}
		buf.data = data
		ch <- segmentData{path: path, buf: buf, err: err}
	}()
	return ch
}

// scanSegment splits one segment, which must hold exactly the seqs
// seg.index..end-1, into entries and hands those at or after from to p.
func scanSegment(sd segmentData, seg segmentFile, end, from uint64, p *replayPipeline) error {
	if sd.err != nil {
		return sd.err
	}
	path, data := sd.path, sd.buf.data
	if end < seg.index {
		return fmt.Errorf("wal: replay: %s: segment starts at %d, after the next one or the end %d: %w",
			path, seg.index, end, ErrCorrupt)
	}
	seq := seg.index
	var warm lineWarmer
	for off := 0; off < len(data); seq++ {
		warm.upTo(data, off+splitAheadBytes)
		entry, n := nextEntry(data[off:])
		if n == 0 {
			return fmt.Errorf("wal: replay: %s: byte %d: seq %d: entry of %d bytes does not fit: %w",
				path, off, seq, len(data)-off, ErrCorrupt)
		}
		if seq >= end {
			return fmt.Errorf("wal: replay: %s: byte %d: seq %d: entry past the segment's end %d: %w",
				path, off, seq, end-1, ErrCorrupt)
		}
		if seq >= from {
			if err := p.add(&sd, off, seq, entry); err != nil {
				return err
			}
		}
		off += n
	}
	if seq != end {
		return fmt.Errorf("wal: replay: %s: holds seq %d..%d, want up to %d: %w",
			path, seg.index, seq-1, end-1, ErrCorrupt)
	}
	p.warmed ^= warm.sum
	return p.submit()
}

// splitAheadBytes is how far ahead of the entry being split scanSegment
// loads the segment's cache lines. Each entry's offset comes from the
// length in front of the entry before it, so the split is a chain of
// dependent loads, and with the segment's bytes not in cache each link was
// a miss of its own: the split was 0.40 s of 4.7 s in the CPU profile of
// 5,000,000 replayed records (72 ns an entry in the length varints), and
// 0.14 s with the lines loaded ahead (the loads 0.11 s of it), whose
// addresses do not depend on the chain, so they are fetched together.
const splitAheadBytes = 2048

// lineWarmer loads one byte of every cache line of a buffer, in order, up
// to a limit that moves ahead of where the buffer is being read.
type lineWarmer struct {
	next int  // offset of the next line to load
	sum  byte // the bytes loaded, kept so that the loads are not removed
}

// cacheLineBytes is the cache line of the amd64 and arm64 processors
// marketd runs on; a smaller line only leaves some lines to be fetched
// when read.
const cacheLineBytes = 64

// upTo loads the lines of b before offset limit not loaded yet.
func (w *lineWarmer) upTo(b []byte, limit int) {
	limit = min(limit, len(b))
	next, sum := w.next, w.sum
	for ; next < limit; next += cacheLineBytes {
		sum ^= b[next]
	}
	w.next, w.sum = next, sum
}
