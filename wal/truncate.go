package wal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// truncRequest asks the writer to drop the records before seq.
type truncRequest struct {
	seq   uint64
	reply chan truncReply // capacity 1
}

// truncReply is the writer's answer to a truncRequest: its error, and the
// second links to the removed segment files that the requester removes
// (trimLinkSuffix).
type truncReply struct {
	err   error
	links []string
}

// Unlinking a segment file frees its blocks, and on this machine's ext4 an
// unlink took 20 ms on average in BenchmarkTruncateStep (91% of a step's
// time on the writer, against 8% for the fsyncs; docs/PERFORMANCE.md,
// "The second after a snapshot"), while no commit is written. So before
// tidwall removes the segments a truncation drops, the writer gives each a
// second name, NAME.TRIM, which tidwall and listSegments ignore: tidwall's
// remove then only drops a name, and TruncateFront's caller removes the
// NAME.TRIM files, freeing the blocks on its own goroutine once the writer
// has gone back to committing. Open removes any left by a crash.
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
	req := truncRequest{seq: seq, reply: make(chan truncReply, 1)}
	select {
	case l.truncReqs <- req:
	case <-l.exited:
		return fmt.Errorf("wal: truncate front to %d: %w", seq, *l.final.Load())
	case <-ctx.Done():
		return fmt.Errorf("wal: truncate front to %d: %w", seq, context.Cause(ctx))
	}
	select {
	case r := <-req.reply:
		// The truncation's outcome is r.err alone: a second name that
		// cannot be removed holds disk space until Open removes it
		// (removeTrimLinks), and must not fail a trim that is done and
		// durable, on which the snapshot manager's retention depends.
		if err := removeLinks(r.links); err != nil {
			l.logger.Warn("wal: a trimmed segment stays on disk until the next open", "err", err)
		}
		return r.err
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
		req.reply <- truncReply{err: fmt.Errorf("wal: truncate front to %d: %w", req.seq, err)}
		return err
	}
	first, last := l.firstSeq.Load(), l.lastSeq.Load()
	switch {
	case req.seq <= first:
		req.reply <- truncReply{}
		return nil
	case req.seq > last+1:
		req.reply <- truncReply{err: fmt.Errorf("wal: truncate front to %d: log ends at %d: %w", req.seq, last, ErrOutOfRange)}
		return nil
	}
	links := l.linkDropped(req.seq)
	if err := l.tw.TruncateFront(req.seq); err != nil {
		err = l.fail(fmt.Errorf("truncate front to %d: %w", req.seq, err))
		req.reply <- truncReply{err: err, links: links}
		return err
	}
	if !l.opts.NoFsync {
		if err := l.dirFile.Sync(); err != nil {
			err = l.fail(fmt.Errorf("fsync directory %s after truncating to %d: %w", l.dir, req.seq, err))
			req.reply <- truncReply{err: err, links: links}
			return err
		}
		l.counters.dirFsyncs.Add(1)
	}
	// A truncation inside the last segment rewrites it under a new name
	// and reads it back into a slice of its size.
	l.seg.reload(l)
	l.segBuf.install()
	l.firstSeq.Store(req.seq)
	req.reply <- truncReply{links: links}
	return nil
}

// linkDropped gives every segment file that a truncation to seq removes
// (those starting at or before the segment holding seq, which tidwall
// rewrites) a second name NAME.TRIM, and returns those names. A file it
// cannot link is left to tidwall's remove alone: a slower truncation, not
// a failed one.
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

// removeLinks removes the NAME.TRIM files of a truncation.
func removeLinks(links []string) error {
	var errs []error
	for _, p := range links {
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
	return removeLinks(links)
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
