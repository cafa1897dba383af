package snapshot

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// Pacing of a periodic snapshot's CPU (docs/PERFORMANCE.md, "Stalls of the
// trade path"). Capturing and encoding 1,000,000 accounts was over a second
// of one core's work (about 0.35 s since the accounts are captured in memory
// order: "A heap the collector marks quickly"); unpaced, the snapshot's goroutine kept a core busy
// for all of it (an execution trace of an open loop of 8,000 trades/s gave
// it 873 ms of running in a window of 1.3 s), and on two cores a server at
// half its capacity then has less CPU than its load needs: requests queue
// for as long as the snapshot lasts. So a periodic snapshot may rest after
// each chunk for as long as a share of a core requires. It is off by
// default: in two alternating pairs of open-loop runs at 8,000 trades/s
// with 1,000,000 accounts, the runs with a share of 0.25 were worse in
// every second, those without a snapshot included (p99 18.5 and 140.4 ms
// against 5.5 and 6.3 ms unpaced), for a cause not found yet. Later A/B
// runs on a quiet machine (docs/PERFORMANCE.md, "The snapshot's pacing, A/B
// on one quiet machine") showed pacing remove the stall of frequent
// snapshots but not help at 1,000,000 accounts, so the default stays.
const (
	// DefaultCPUShare is Options.CPUShare's default: a whole core, that is
	// no rest.
	DefaultCPUShare = 1
	// maxRestPerChunk bounds one rest, so that a chunk slowed by a busy
	// machine does not stretch the snapshot without bound.
	maxRestPerChunk = 250 * time.Millisecond
)

// pacer makes a goroutine's work take at most share of one core's time:
// after each unit of work, rest returns once the time since the last rest
// ended, taken as work, is share of the time since then. The work is
// measured in wall-clock time, waits for a core included, so that a busy
// machine slows the snapshot more.
type pacer struct {
	share  float64 // in (0, 1); 1 or more: no rest
	now    func() time.Time
	wait   func(context.Context, time.Duration) error
	since  time.Time
	rested time.Duration // in all
	// longest is the longest unit of work, from the end of a rest (or a
	// yield) to the next: how long the snapshot kept a processor at most
	// (docs/PERFORMANCE.md, "The snapshot's second").
	longest time.Duration
	// nice is the nice value the accounts' pass runs at (priority.go); 0:
	// the process's own. With it the snapshot runs on a thread of its own
	// (ownThread). niced is the value the thread ran the accounts at, 0
	// until accounts set it; niceErr is why it could not be set.
	nice, niced int
	lowered     bool
	niceErr     error
}

// newPacer returns a pacer at share of one core, whose accounts' pass
// runs at nice (0: the process's priority).
func newPacer(share float64, nice int) *pacer {
	return &pacer{share: share, nice: nice, now: time.Now, wait: sleep, since: time.Now()}
}

// sleep waits for d, or returns ctx's error.
func sleep(ctx context.Context, d time.Duration) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// rest waits after a unit of work, or returns ctx's error. It first
// yields the processor, paced or not: a goroutine that became runnable
// while the snapshot ran a chunk (a market actor, a request woken by the
// log) runs before the next chunk, instead of waiting for the scheduler to
// preempt the snapshot after up to 10 ms.
func (p *pacer) rest(ctx context.Context) error {
	if p == nil {
		return nil
	}
	if ctx.Err() != nil {
		// Unpaced too: a snapshot walked at a low priority on a busy
		// machine could otherwise hold up a shutdown for long.
		return fmt.Errorf("snapshot: paced: %w", context.Cause(ctx))
	}
	work := p.now().Sub(p.since)
	p.longest = max(p.longest, work)
	runtime.Gosched()
	if p.share >= 1 || p.share <= 0 {
		p.since = p.now()
		return nil
	}
	d := min(time.Duration(float64(work)*(1-p.share)/p.share), maxRestPerChunk)
	if err := p.wait(ctx, d); err != nil {
		return fmt.Errorf("snapshot: paced: %w", err)
	}
	p.rested += d
	p.since = p.now()
	return nil
}
