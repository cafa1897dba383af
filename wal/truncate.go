package wal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// truncRequest asks the writer to drop the records before seq.
type truncRequest struct {
	seq   uint64
	reply chan truncReply // capacity 1
}

// truncReply is the writer's answer to a truncRequest: its error, and how
// long the truncation kept the writer from committing (after the commit it
// makes first).
type truncReply struct {
	err  error
	held time.Duration
}

// Unlinking a segment file frees its blocks, and on this machine's ext4 an
// unlink took 20 ms on average in BenchmarkTruncateStep (91% of a step's
// time on the writer, against 8% for the fsyncs; docs/PERFORMANCE.md,
// "The second after a snapshot"), while no commit is written. So before
// tidwall removes the segments a truncation drops, TruncateFront's caller
// gives each a second name, NAME.TRIM, which tidwall and listSegments
// ignore: tidwall's remove on the writer then only drops a name, and the
// caller removes the NAME.TRIM files, freeing the blocks on its own
// goroutine once the writer has gone back to committing. The links are
// made on the caller's goroutine too, before the request: the files a
// truncation drops are the ones before the segment holding its target and
// that segment itself, which the writer no longer changes (or, for the
// last segment, changes in place: the link is to the same file). Open
// removes any NAME.TRIM file left by a crash.
const trimLinkSuffix = ".TRIM"

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
	_, err := l.TrimFront(ctx, seq, 0)
	return err
}

// TrimFront is TruncateFront for a log that goes on committing, as a
// periodic snapshot trims it: the segment files the truncation drops are
// freed one at a time on the caller's goroutine, with rest between them,
// so that freeing their blocks (and the discards they cause) comes in small
// pieces beside the log's fsyncs. It also returns how long the writer spent
// on the truncation, away from committing (docs/PERFORMANCE.md, "The
// snapshot's second").
func (l *Log) TrimFront(ctx context.Context, seq uint64, rest time.Duration) (held time.Duration, err error) {
	var links []string
	if seq > l.firstSeq.Load() {
		links = l.linkDropped(seq)
	}
	// Whatever the outcome, the second names go: those of files the
	// truncation dropped free their blocks, those of files it kept (a
	// truncation refused or failed) leave the files as they were. The
	// truncation's outcome is its own error alone: a second name that
	// cannot be removed holds disk space until Open removes it
	// (removeTrimLinks), and must not fail a trim that is done and
	// durable, on which the snapshot manager's retention depends.
	defer func() {
		if err := removeLinks(ctx, links, rest); err != nil {
			l.logger.Warn("wal: a trimmed segment stays on disk until the next open", "err", err)
		}
	}()
	req := truncRequest{seq: seq, reply: make(chan truncReply, 1)}
	select {
	case l.truncReqs <- req:
	case <-l.exited:
		return 0, fmt.Errorf("wal: truncate front to %d: %w", seq, *l.final.Load())
	case <-ctx.Done():
		return 0, fmt.Errorf("wal: truncate front to %d: %w", seq, context.Cause(ctx))
	}
	select {
	case r := <-req.reply:
		return r.held, r.err
	case <-ctx.Done():
		// The writer may still carry the truncation out: its files keep
		// their second names, which Open removes, rather than lose them
		// to a truncation that then fails.
		links = nil
		return 0, fmt.Errorf("wal: truncate front to %d: %w", seq, context.Cause(ctx))
	}
}

// serveTruncate carries out a truncation on the writer goroutine. It
// returns the sticky failure if committing or truncating failed; a request
// out of range only gets its error on the reply.
func (l *Log) serveTruncate(req truncRequest) error {
	// One commit first, bounded like any other, so that a truncation never
	// waits behind more than one batch and sees the records ready before it.
	if _, err := l.commit(); err != nil {
		req.reply <- truncReply{err: fmt.Errorf("wal: truncate front to %d: %w", req.seq, err)}
		return err
	}
	began := time.Now()
	first, last := l.firstSeq.Load(), l.lastSeq.Load()
	switch {
	case req.seq <= first:
		req.reply <- truncReply{}
		return nil
	case req.seq > last+1:
		req.reply <- truncReply{err: fmt.Errorf("wal: truncate front to %d: log ends at %d: %w", req.seq, last, ErrOutOfRange)}
		return nil
	}
	if err := l.tw.TruncateFront(req.seq); err != nil {
		err = l.fail(fmt.Errorf("truncate front to %d: %w", req.seq, err))
		req.reply <- truncReply{err: err, held: time.Since(began)}
		return err
	}
	if !l.opts.NoFsync {
		if err := l.dirFile.Sync(); err != nil {
			err = l.fail(fmt.Errorf("fsync directory %s after truncating to %d: %w", l.dir, req.seq, err))
			req.reply <- truncReply{err: err, held: time.Since(began)}
			return err
		}
		l.counters.dirFsyncs.Add(1)
	}
	// A truncation inside the last segment rewrites it under a new name
	// and reads it back into a slice of its size.
	l.seg.reload(l)
	l.segBuf.install()
	l.firstSeq.Store(req.seq)
	req.reply <- truncReply{held: time.Since(began)}
	return nil
}

// linkDropped gives every segment file that a truncation to seq removes
// (those starting at or before the segment holding seq, which tidwall
// rewrites) a second name NAME.TRIM, and returns those names. A file it
// cannot link is left to tidwall's remove alone: a slower truncation, not
// a failed one. It runs on TruncateFront's caller: listSegments is safe
// from any goroutine (SegmentStarts).
func (l *Log) linkDropped(seq uint64) []string {
	segs, err := listSegments(l.opts.FS, l.dir)
	if err != nil {
		return nil
	}
	var links []string
	for _, s := range segs {
		if s.index > seq || len(s.name) != segmentNameLen {
			continue
		}
		path := filepath.Join(l.dir, s.name)
		if err := os.Link(path, path+trimLinkSuffix); err != nil {
			continue
		}
		links = append(links, path+trimLinkSuffix)
	}
	return links
}

// removeLinks removes the NAME.TRIM files of a truncation, resting for
// rest between two removals; once ctx is done it removes the rest without
// resting.
func removeLinks(ctx context.Context, links []string, rest time.Duration) error {
	var errs []error
	for i, p := range links {
		if i > 0 && rest > 0 && ctx.Err() == nil {
			t := time.NewTimer(rest)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		if err := os.Remove(p); err != nil {
			errs = append(errs, fmt.Errorf("wal: remove %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// removeTrimLinks removes the NAME.TRIM files a crash left in dir.
func removeTrimLinks(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("wal: list %s: %w", dir, err)
	}
	var links []string
	for _, e := range ents {
		name := e.Name()
		if len(name) != segmentNameLen+len(trimLinkSuffix) || name[segmentNameLen:] != trimLinkSuffix {
			continue
		}
		if _, err := strconv.ParseUint(name[:segmentNameLen], 10, 64); err != nil {
			continue
		}
		links = append(links, filepath.Join(dir, name))
	}
	return removeLinks(context.Background(), links, 0)
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
