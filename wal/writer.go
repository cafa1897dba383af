package wal

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// smallCommitRecords is the commit size under which the writer yields
// before committing again, so that records already being placed join the
// next commit: without it, with fsync off, the writer woke for every
// record (1.2 records per write syscall with 64 producers). A yield costs
// nothing when no one else is runnable, so a lone producer waits no longer.
const smallCommitRecords = 64

// gathered reports, after a commit, whether the next one's records are
// already there to take: with fsync on, the record that follows the last
// one written arrived during the commit's fsync, so the writer commits
// again at once instead of yielding. The yield puts the writer on the
// global run queue, which a processor reads only when its own queue is
// empty or every 61st schedule: under an open loop, where records arrive
// all the time, every commit began 0.1 ms later at the median and up to
// tens of milliseconds under load (docs/PERFORMANCE.md, "The open loop's
// tail", section 8). When nothing is ready, the yield stays: callers
// answered by this commit are about to place their next records.
func (l *Log) gathered() bool {
	return !l.opts.NoFsync && l.slots[l.writeNext&l.slotMask].Load() != nil
}

// run is the writer goroutine: the only user of the tidwall log from Start
// until it returns. It exits on Close (after writing what is ready) or on
// the first write, fsync or truncation error; Close waits for it.
func (l *Log) run() {
	defer close(l.exited)
	released := make(chan struct{})
	go l.release(released)
	err := l.loop()
	// Every commit handed over is acknowledged before the failed one and
	// the slots get their error.
	close(l.releases)
	<-released
	l.shutdown(err)
}

// releaseQueue bounds the commits handed to the releaser and not yet
// acknowledged; the writer waits for room beyond it.
const releaseQueue = 4

// release is the releaser goroutine: it acknowledges the records of each
// commit the writer hands over, in order, and returns their entries to the
// pool. The answers wake the callers, and a woken goroutine is queued on
// the processor of the goroutine that woke it: sent by the writer, a
// commit's few hundred callers waited on the writer's processor while the
// writer blocked in the next fsync, holding it (docs/PERFORMANCE.md, "The
// trade path's own CPU"). Sent from here, they run while the writer syncs.
// It exits when the writer closes releases, and closes done.
func (l *Log) release(done chan<- struct{}) {
	defer close(done)
	for r := range l.releases {
		for i, e := range r.entries {
			deliver(e.done, nil)
			l.recycle(e)
			r.entries[i] = nil
		}
		l.wakeWaiters()
		if l.opts.Observer != nil {
			r.commit.Took = time.Since(r.commit.Began)
			l.opts.Observer.ObserveCommit(r.commit)
		}
		select {
		case l.freeEntries <- r.entries[:0]:
		default: // the writer made a new one meanwhile; let this one go
		}
	}
}

// releasedCommit is a durable commit handed from the writer to the
// releaser.
type releasedCommit struct {
	entries []*entry
	commit  Commit
}

// loop commits ready records until Close or a failure, which it returns.
func (l *Log) loop() error {
	for {
		n, err := l.commit()
		if err != nil {
			return err
		}
		if n > 0 {
			// Busy: serve a truncation between commits so that it cannot
			// starve, then commit again.
			select {
			case req := <-l.truncReqs:
				if err := l.serveTruncate(req); err != nil {
					return err
				}
			default:
			}
			if l.gather(n) {
				continue
			}
			if n < smallCommitRecords && !l.gathered() {
				runtime.Gosched()
			}
			continue
		}
		select {
		case <-l.kick:
			runtime.Gosched() // as above: gather the records arriving with this one
		case req := <-l.truncReqs:
			if err := l.serveTruncate(req); err != nil {
				return err
			}
		case <-l.stop:
			// Next fails from now on; write what is ready and stop.
			if err := l.commitAll(); err != nil {
				return err
			}
			return ErrClosed
		}
	}
}

// commitAll commits until no record is ready.
func (l *Log) commitAll() error {
	for {
		n, err := l.commit()
		if err != nil || n == 0 {
			return err
		}
	}
}

// commit writes the ready records that follow the last one written, up to
// the batch bounds and the end of the current segment, as one tidwall
// batch: one write, then one fsync of the segment file (tidwall's own, when
// the batch fills the segment: see write) and, when the write may have gone to a segment file created
// since the last directory fsync, one of the directory (segtrack.go). Only then does it acknowledge the records, in
// sequence order. It returns the number of records committed and, on
// failure, the sticky error (see fail).
func (l *Log) commit() (int, error) {
	bytes, stored := 0, 0 // frame bytes; the same as tidwall stores them
	room := l.segBuf.room()
	for len(l.pending) < l.opts.MaxBatchRecords {
		slot := &l.slots[l.writeNext&l.slotMask]
		e := slot.Load()
		if e == nil {
			if len(l.pending) == 0 {
				l.noteHole()
			}
			break
		}
		if e.seq != l.writeNext {
			panic(fmt.Sprintf("BUG: wal: slot of seq %d holds seq %d", l.writeNext, e.seq))
		}
		if len(l.pending) > 0 && bytes+len(e.frame) > l.opts.MaxBatchBytes {
			break
		}
		slot.Store(nil)
		bytes += len(e.frame)
		stored += tidwallEntryBytes(e.frame)
		l.pending = append(l.pending, e)
		l.writeNext++
		if room > 0 && stored >= room {
			// This record fills the segment: the commit ends with it
			// (see write).
			break
		}
	}
	n := len(l.pending)
	if n == 0 {
		return 0, nil
	}
	first, last := l.pending[0].seq, l.pending[n-1].seq

	began := time.Now()
	gathered := l.startCommit(began)
	held := l.closeHole(began)
	var fsync time.Duration
	synced, err := l.write(bytes, stored)
	if err != nil {
		return 0, l.fail(fmt.Errorf("write seq %d..%d: %w", first, last, err))
	}
	write := time.Since(began)
	l.counters.writeNanos.Add(int64(write))
	l.lastSeq.Store(last)
	if !l.opts.NoFsync {
		start := time.Now()
		if !synced {
			if err := l.syncTail(); err != nil {
				return 0, l.fail(fmt.Errorf("fsync seq %d..%d: %w", first, last, err))
			}
			l.counters.fsyncs.Add(1)
		}
		if !l.seg.unchanged(l.segBuf.tailSegment(), stored) { // see segtrack.go
			if err := l.dirFile.Sync(); err != nil {
				return 0, l.fail(fmt.Errorf("fsync directory %s after seq %d..%d: %w", l.dir, first, last, err))
			}
			l.counters.dirFsyncs.Add(1)
			l.seg.reload(l)
		}
		fsync = time.Since(start)
		l.observeFsync(fsync, n)
	}
	l.durable.Store(last)

	l.counters.countCommit(n, bytes)
	l.releases <- releasedCommit{entries: l.pending,
		commit: Commit{Records: n, Bytes: bytes, First: first, Last: last, Began: began, Write: write, Fsync: fsync, Held: held, Gathered: gathered}}
	select {
	case l.pending = <-l.freeEntries:
	default:
		l.pending = make([]*entry, 0, cap(l.pending))
	}

	l.publishReleased(last)
	return n, nil
}

// closeHole ends the hole noteHole found, if any, now that the commit
// starting at now takes its missing record: the records after it waited
// since it was noted. It returns that wait, 0 when there was no hole.
func (l *Log) closeHole(now time.Time) time.Duration {
	if l.holeSince.IsZero() {
		return 0
	}
	held := now.Sub(l.holeSince)
	l.holeSince = time.Time{}
	l.counters.holds.Add(1)
	l.counters.heldNanos.Add(int64(held))
	return held
}

// holeLookahead is how many seqs past a missing record noteHole looks at
// for a ready one: a commit is held back only when a record after the
// hole is ready, and one among the next few is, when any is (the records
// of the other markets' actors, placed in the order they reserved).
const holeLookahead = 8

// noteHole runs when writeNext's record is missing and the commit has
// nothing yet: if a later record is ready, every record after the hole is
// held back by the actor that reserved writeNext and has not appended it.
// It keeps the time it first saw that, and commit counts the wait when the
// record arrives (Commit.Held). Runs only on the writer goroutine.
//
// The caller's look at writeNext's slot may be stale by the time a later
// slot is read: a producer can append writeNext and then the records after
// it in between, and the two reads together would report a hole that never
// was (seen with one goroutine appending in order, the writer descheduled
// between the reads). So writeNext's slot is read again after a later one
// is found ready. Only the writer empties a slot, so if it is still
// missing then, the later record was ready while it was missing: a real
// hole, whose wait is timed from now, never longer than it lasted.
func (l *Log) noteHole() {
	if !l.holeSince.IsZero() {
		return
	}
	for i := uint64(1); i <= holeLookahead; i++ {
		if l.slots[(l.writeNext+i)&l.slotMask].Load() != nil {
			if l.slots[l.writeNext&l.slotMask].Load() != nil {
				return // it arrived meanwhile; Append's kick brings the writer back
			}
			l.holeSince = time.Now()
			l.counters.holesSeen.Add(1)
			return
		}
	}
}

// write hands the pending records to tidwall as one batch. It reports
// whether tidwall fsynced them all itself: the commit gathers records only
// up to the one that fills the current segment (segmentBuffers.room), and
// tidwall starts a new segment right after that record, inside the same
// WriteBatch, with an fsync of the full one. That fsync is then the
// commit's: the file the writer would fsync after it is the new, empty
// one. Ending the commit there, rather than writing the next records to
// the new segment in the same commit, spares one fsync per segment
// (the full segment's and the new one's in a single commit); the
// directory is still fsynced before any record in the new segment is
// acknowledged (segtrack.go). It also lets the new segment's buffer go in
// before anything is appended to it (segbuf.go).
//
// The frames go to tidwall staged in the segment's own buffer when they
// can (staged.go), else copied into the batch; bytes and stored are the
// commit's frame bytes and the bytes tidwall stores for them.
func (l *Log) write(bytes, stored int) (synced bool, err error) {
	staged := l.stage(bytes, stored)
	if !staged {
		for _, e := range l.pending {
			l.batch.Write(e.seq, e.frame) // copies the frame
		}
	}
	err = l.tw.WriteBatch(&l.batch)
	if staged {
		l.unstage()
	}
	if err != nil {
		return false, err
	}
	return l.segBuf.install() && l.segBuf.tailEmpty(), nil
}

// observeFsync counts one commit's fsync time and logs it when slow.
func (l *Log) observeFsync(d time.Duration, records int) {
	c := &l.counters
	c.fsyncNanos.Add(int64(d))
	if int64(d) > c.fsyncMaxNanos.Load() {
		c.fsyncMaxNanos.Store(int64(d))
	}
	if d > l.opts.SlowFsync {
		l.logger.Warn("wal: slow fsync", "duration", d, "budget", l.opts.SlowFsync, "records", records)
	}
}

func (l *Log) recycle(e *entry) {
	e.done = nil
	if cap(e.frame) > maxPooledFrameBytes {
		e.frame = nil
	}
	l.entries.Put(e)
}

// fail makes err the log's sticky failure: Next fails from now on, and no
// record is acknowledged any more. There is no retry: after a failed fsync
// the kernel may have dropped the dirty pages and marked them clean, so a
// second fsync can succeed without the data being on disk (PostgreSQL's
// "fsyncgate", 2018). The process must restart and replay the log.
func (l *Log) fail(cause error) error {
	err := fmt.Errorf("%w: %w", ErrFailed, cause)
	if !l.failErr.CompareAndSwap(nil, &err) {
		return *l.failErr.Load() // the writer stops at its first failure; keep that one
	}
	defer close(l.failedCh)
	l.mu.Lock()
	l.failed = err
	l.stopReservations()
	l.mu.Unlock()
	l.logger.Error("wal: log failed; no record will be acknowledged until restart", "dir", l.dir, "err", err)
	return err
}

// shutdown runs as the writer returns with err (ErrClosed or the sticky
// failure): every record not acknowledged gets err on its done channel,
// those of the failed commit first, then those in the slots in sequence
// order. Append delivers err itself for a record placed after the sweep.
func (l *Log) shutdown(err error) {
	if !errors.Is(err, ErrClosed) && !errors.Is(err, ErrFailed) {
		panic(fmt.Sprintf("BUG: wal: writer stopped by %v", err))
	}
	l.final.Store(&err)
	for i, e := range l.pending {
		deliver(e.done, err)
		l.pending[i] = nil
	}
	l.pending = l.pending[:0]
	// Next fails once the log is closed or failed, both set before the
	// writer returns, so no seq past reserved can be appended any more.
	for seq := l.writeNext; seq <= l.lastReserved(); seq++ {
		if e := l.slots[seq&l.slotMask].Swap(nil); e != nil {
			deliver(e.done, fmt.Errorf("wal: append seq %d: %w", e.seq, err))
		}
	}
	l.wakeWaiters()
}
