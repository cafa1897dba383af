package wal

import (
	"context"
	"fmt"

	"marketd/core"
	"marketd/wal/record"
)

// Next reserves the next sequence number (core.Journal). Call it while
// holding every object the record changes, so that the log order agrees
// with the order of changes to each object; then Append the record. Every
// reserved number must be appended, or the writer stalls at the gap.
//
// Next blocks while QueueRecords numbers are reserved and not yet written.
// It fails with the log's error once the log has failed, and with ErrClosed
// once Close has begun.
//
// While the queue has room it takes no lock: a compare-and-swap on the
// reservation word, which Close and the log's failure mark as stopped
// first, so that no number is handed out after either (see stopBit). A
// market actor holds back every later record, of every market, from its
// reservation to its Append (docs/PERFORMANCE.md, "The open loop's tail"),
// so it must not queue there behind the writer's wake-ups.
func (l *Log) Next() (uint64, error) {
	for {
		// released first: it never passes a reservation already made,
		// so r-rel cannot wrap around.
		rel := l.released.Load()
		r := l.reservedSeq.Load()
		if r&stopBit != 0 || r-rel >= uint64(l.opts.QueueRecords) {
			return l.nextSlow()
		}
		if l.reservedSeq.CompareAndSwap(r, r+1) {
			return r + 1, nil
		}
	}
}

// nextSlow is Next when the queue is full or the log stopped: it waits on
// cond under mu, counted in waiters so that the writer wakes it.
func (l *Log) nextSlow() (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Counted before released is read below: the writer stores released
	// before it reads waiters, so either this reads the new released or
	// the writer sees a waiter and broadcasts, which it can only do once
	// Wait has let go of mu.
	l.waiters.Add(1)
	defer l.waiters.Add(-1)
	for {
		// failed and closed are set under mu before the stop bit, so a
		// reservation word marked stopped always finds one of them here.
		if l.failed != nil {
			return 0, fmt.Errorf("wal: next: %w", l.failed)
		}
		if l.closed {
			return 0, fmt.Errorf("wal: next: %w", ErrClosed)
		}
		rel := l.released.Load() // before r, as in Next
		r := l.reservedSeq.Load()
		if r-rel >= uint64(l.opts.QueueRecords) {
			l.cond.Wait()
			continue
		}
		if l.reservedSeq.CompareAndSwap(r, r+1) {
			return r + 1, nil
		}
	}
}

// stopReservations marks the reservation word stopped and wakes the
// waiting Next calls. The caller holds mu and has just set closed or
// failed: from then on every Next fails.
func (l *Log) stopReservations() {
	l.reservedSeq.Or(stopBit)
	l.cond.Broadcast()
}

// lastReserved returns the last seq Next handed out.
func (l *Log) lastReserved() uint64 { return l.reservedSeq.Load() &^ stopBit }

// publishReleased makes the seqs up to last no longer count against
// QueueRecords, and wakes the Next calls waiting for room, if any.
func (l *Log) publishReleased(last uint64) {
	l.released.Store(last)
	if l.waiters.Load() > 0 {
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
	}
}

// Append hands over the record for a sequence number reserved by Next
// (core.Journal). It encodes the record in the caller's goroutine, so the
// caller may change rec as soon as Append returns, and never waits for the
// disk. Records may be appended in any order; the writer writes them in
// sequence order, each commit taking the ready records that follow the last
// one written without a gap.
//
// done, which needs room for one value, receives nil once the record is
// durable (every record before it is durable too), or the error that
// stopped the log: the log's failure, wrapping ErrFailed, or ErrClosed. A
// nil done is allowed for a record whose outcome nobody waits for.
//
// Appending a number that was not reserved, or appending one twice, is a
// bug and panics.
func (l *Log) Append(seq uint64, rec *core.Record, done chan<- error) {
	if seq == 0 || seq > l.lastReserved() || seq <= l.lastSeq.Load() {
		panic(fmt.Sprintf("BUG: wal: append of seq %d, reserved up to %d, written up to %d",
			seq, l.lastReserved(), l.lastSeq.Load()))
	}
	e := l.entries.Get().(*entry)
	e.seq = seq
	e.done = done
	e.frame = record.AppendFramed(e.frame[:0], seq, rec)

	slot := &l.slots[seq&l.slotMask]
	if !slot.CompareAndSwap(nil, e) {
		panic(fmt.Sprintf("BUG: wal: seq %d appended twice", seq))
	}
	// Once the writer has stopped, it may have swept the slots before the
	// store above: whichever of it and us takes the entry back delivers.
	if p := l.final.Load(); p != nil {
		if slot.CompareAndSwap(e, nil) {
			deliver(e.done, fmt.Errorf("wal: append seq %d: %w", seq, *p))
		}
		return
	}
	select {
	case l.kick <- struct{}{}:
	default: // a kick is already pending; the writer will see this slot too
	}
}

// WaitDurable returns nil once every record up to seq is durable, or the
// error that stopped the log first, or the context's error.
func (l *Log) WaitDurable(ctx context.Context, seq uint64) error {
	for {
		if l.durable.Load() >= seq {
			return nil
		}
		l.waitMu.Lock()
		ch := l.waitChan
		l.waitMu.Unlock()
		// Checked again after taking ch: the writer stores durable before
		// closing ch, so a commit in between cannot be missed.
		if l.durable.Load() >= seq {
			return nil
		}
		if p := l.final.Load(); p != nil {
			return fmt.Errorf("wal: wait durable %d: %w", seq, *p)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("wal: wait durable %d: %w", seq, context.Cause(ctx))
		}
	}
}

// wakeWaiters wakes every WaitDurable call.
func (l *Log) wakeWaiters() {
	l.waitMu.Lock()
	close(l.waitChan)
	l.waitChan = make(chan struct{})
	l.waitMu.Unlock()
}

// deliver sends err on done, which the caller of Append promised has room.
func deliver(done chan<- error, err error) {
	if done == nil {
		return
	}
	select {
	case done <- err:
	default:
		panic("BUG: wal: done channel of an appended record has no room")
	}
}
