package wal

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestNextConcurrentWithClose hammers Next and Append from many goroutines
// with a queue so small that Next keeps blocking for room, and closes the
// log meanwhile, once a number of records is durable (which needs the
// writer to wake the blocked Next calls). Every number handed out must be handed out once, the
// numbers must run from 1 without a hole, none may be handed out by a Next
// that began after Close returned, and each must be answered: durable
// (and then in the log) or ErrClosed.
func TestNextConcurrentWithClose(t *testing.T) {
	for _, tc := range []struct {
		name      string
		producers int
		queue     int
		closeAt   uint64 // records durable before Close
	}{
		{"queue 2, close at once", 16, 2, 0},
		{"queue 4, close after 100", 32, 4, 100},
		{"queue 64, close after 1000", 64, 64, 1000},
		// Room to spare: every Next takes the lock-free path.
		{"queue 65536, close after 1000", 64, 1 << 16, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := testOptions()
			opts.NoFsync = true
			opts.QueueRecords = tc.queue
			l := mustOpen(t, dir, opts)
			l.Start()

			var closed atomic.Bool // set once Close has returned
			type outcome struct {
				seq uint64
				err error
			}
			got := make([][]outcome, tc.producers)
			var wg sync.WaitGroup
			for p := range tc.producers {
				wg.Go(func() {
					// Each waits for its answer before the next
					// reservation, as a market actor answering requests
					// does, and goes on after ErrClosed: only Next stops.
					done := make(chan error, 1)
					for {
						after := closed.Load()
						seq, err := l.Next()
						if err != nil {
							if !errors.Is(err, ErrClosed) {
								t.Errorf("next: %v, want ErrClosed", err)
							}
							return
						}
						if after {
							t.Errorf("next began after Close returned and got seq %d", seq)
						}
						// The queue bound: never more than QueueRecords
						// reserved past what is written.
						if last := l.LastSeq(); seq > last+uint64(tc.queue) {
							t.Errorf("reserved seq %d with only %d written, queue %d", seq, last, tc.queue)
						}
						l.Append(seq, recordFor(seq), done)
						got[p] = append(got[p], outcome{seq, <-done})
					}
				})
			}
			for deadline := time.Now().Add(20 * time.Second); l.Durable() < tc.closeAt; {
				if time.Now().After(deadline) {
					t.Fatalf("durable %d after 20 s, want %d before closing", l.Durable(), tc.closeAt)
				}
				time.Sleep(time.Millisecond)
			}
			if err := l.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			closed.Store(true)
			wg.Wait()

			var seqs []uint64
			durable := uint64(0)
			for _, outs := range got {
				for _, o := range outs {
					seqs = append(seqs, o.seq)
					switch err := o.err; {
					case err == nil:
						durable = max(durable, o.seq)
					case !errors.Is(err, ErrClosed):
						t.Errorf("seq %d: %v, want nil or ErrClosed", o.seq, err)
					}
				}
			}
			slices.Sort(seqs)
			for i, seq := range seqs {
				if seq != uint64(i+1) {
					t.Fatalf("handed out %d numbers; the %d-th is %d (lost or duplicated)", len(seqs), i+1, seq)
				}
			}
			t.Logf("%d numbers handed out, durable up to %d", len(seqs), durable)

			// The log holds every acknowledged record, and the next
			// reservation after reopening follows the last one written.
			l = mustOpen(t, dir, testOptions())
			last := l.LastSeq()
			if last < durable || last > uint64(len(seqs)) {
				t.Fatalf("log ends at %d; acknowledged up to %d, handed out %d", last, durable, len(seqs))
			}
			checkReplay(t, l, 1, last)
			l.Start()
			if seq, _ := appendSeq(t, l); seq != last+1 {
				t.Fatalf("first seq after reopening is %d, want %d", seq, last+1)
			}
			mustClose(t, l)
		})
	}
}

// TestNextWaitsForRoom: with the queue full, Next blocks until the writer
// has written a record, and the writer's commit alone wakes it.
func TestNextWaitsForRoom(t *testing.T) {
	opts := testOptions()
	opts.NoFsync = true
	opts.QueueRecords = 2
	l := mustOpen(t, t.TempDir(), opts)
	l.Start()
	defer mustClose(t, l)
	for round := range 50 {
		first, err := l.Next()
		if err != nil {
			t.Fatal(err)
		}
		second, err := l.Next()
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan uint64)
		go func() {
			seq, err := l.Next()
			if err != nil {
				t.Error(err)
			}
			got <- seq
		}()
		select {
		case seq := <-got:
			t.Fatalf("round %d: next returned %d with %d and %d reserved and the queue 2", round, seq, first, second)
		case <-time.After(time.Millisecond):
		}
		done := make(chan error, 1)
		l.Append(first, recordFor(first), done)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		var third uint64
		select {
		case third = <-got:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: next still blocked 10 s after seq %d was written", round, first)
		}
		for _, seq := range []uint64{second, third} {
			l.Append(seq, recordFor(seq), done)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
}
