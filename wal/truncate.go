package wal

import (
	"context"
	"fmt"
)

// truncRequest asks the writer to drop the records before seq.
type truncRequest struct {
	seq   uint64
	reply chan error // capacity 1
}

// TruncateFront removes the records before seq, keeping seq and every record
// after it; it is how the log is trimmed once a snapshot covers its front.
// The writer goroutine carries it out between commits, after committing the
// records ready (one batch), so it waits for Start. seq at or below FirstSeq does
// nothing; seq past the last record written plus one fails with
// ErrOutOfRange (the log may be emptied, never cut past its end). A failure
// of the truncation itself is the log's sticky failure.
//
// Tidwall truncates by writing the kept part of the first segment to a
// NAME.START file (fsynced, renamed) and removing older files; Open finishes
// a truncation interrupted by a crash. The directory is fsynced after it.
func (l *Log) TruncateFront(ctx context.Context, seq uint64) error {
	req := truncRequest{seq: seq, reply: make(chan error, 1)}
	select {
	case l.truncReqs <- req:
	case <-l.exited:
		return fmt.Errorf("wal: truncate front to %d: %w", seq, *l.final.Load())
	case <-ctx.Done():
		return fmt.Errorf("wal: truncate front to %d: %w", seq, context.Cause(ctx))
	}
	select {
	case err := <-req.reply:
		return err
	case <-ctx.Done():
		return fmt.Errorf("wal: truncate front to %d: %w", seq, context.Cause(ctx))
	}
}

// serveTruncate carries out a truncation on the writer goroutine. It
// returns the sticky failure if committing or truncating failed; a request
// out of range only gets its error on the reply.
func (l *Log) serveTruncate(req truncRequest) error {
	// One commit first, bounded like any other, so that a truncation never
	// waits behind more than one batch and sees the records ready before it.
	if _, err := l.commit(); err != nil {
		req.reply <- fmt.Errorf("wal: truncate front to %d: %w", req.seq, err)
		return err
	}
	first, last := l.firstSeq.Load(), l.lastSeq.Load()
	switch {
	case req.seq <= first:
		req.reply <- nil
		return nil
	case req.seq > last+1:
		req.reply <- fmt.Errorf("wal: truncate front to %d: log ends at %d: %w", req.seq, last, ErrOutOfRange)
		return nil
	}
	if err := l.tw.TruncateFront(req.seq); err != nil {
		err = l.fail(fmt.Errorf("truncate front to %d: %w", req.seq, err))
		req.reply <- err
		return err
	}
	if !l.opts.NoFsync {
		if err := l.dirFile.Sync(); err != nil {
			err = l.fail(fmt.Errorf("fsync directory %s after truncating to %d: %w", l.dir, req.seq, err))
			req.reply <- err
			return err
		}
		l.counters.dirFsyncs.Add(1)
	}
	// A truncation inside the last segment rewrites it under a new name
	// and reads it back into a slice of its size.
	l.seg.reload(l)
	l.segBuf.install()
	l.firstSeq.Store(req.seq)
	req.reply <- nil
	return nil
}

// SegmentStarts returns the sequence number of the first record of each
// segment file, in order, as the directory lists them now. It is safe to
// call from any goroutine: the writer only adds segments at the end and
// drops them at the front.
//
// A TruncateFront to the last record of a segment is the cheapest one:
// tidwall rewrites the part of the segment holding the new first record
// that is kept (one record there, up to a whole segment elsewhere), then
// removes the older files (docs/PERFORMANCE.md, "The second after a
// snapshot").
func (l *Log) SegmentStarts() ([]uint64, error) {
	segs, err := listSegments(l.opts.FS, l.dir)
	if err != nil {
		return nil, err
	}
	starts := make([]uint64, 0, len(segs))
	for _, s := range segs {
		if len(s.name) == segmentNameLen {
			starts = append(starts, s.index)
		}
	}
	return starts, nil
}
