package wal

import (
	"fmt"
	"syscall"
	"time"
)

// GatherRecords is the commit size from which the writer never waits out
// the commit interval: a commit of this many records already spreads its
// fsync's CPU (about 0.14 ms) to under 10 us a record, and under a closed
// loop of a few dozen callers, where each caller's next record waits for
// its last answer, a wait would only lengthen every round trip. A closed
// loop of 64 connections commits 23-25 records at a time on this machine,
// and an open loop at half its durable rate 7-8 (docs/PERFORMANCE.md,
// "The commit interval by default").
//
// Exported, with GatherWait and Nanosleep, so that the benchmarks' group
// commits (bench/baseline) can wait as the log does.
const GatherRecords = 16

// MaxCommitInterval bounds Options.CommitInterval: the longest a record
// may wait, beyond the fsync, for others to share its commit.
const MaxCommitInterval = 10 * time.Millisecond

// GatherWait decides whether a writer, having just committed n records in
// a commit that began since ago, waits out the rest of the commit
// interval before gathering the next one, and for how long. It waits only
// when fsyncs are on, the interval is set, the last commit was a group
// (at least two records: a lone caller never waits) smaller than
// GatherRecords, and GatherRecords records are not already waiting
// (ahead).
func GatherWait(interval, since time.Duration, n int, noFsync, ahead bool) time.Duration {
	if interval <= 0 || noFsync || n < 2 || n >= GatherRecords || ahead {
		return 0
	}
	return max(interval-since, 0)
}

// gather waits out the rest of the commit interval after a commit of n
// records, when GatherWait says so, and reports whether it waited. The
// wait is added to the next commit's Commit.Gathered.
func (l *Log) gather(n int) bool {
	interval := time.Duration(l.commitInterval.Load())
	if interval <= 0 || l.opts.NoFsync {
		// Off, as outside snapshots by default: no slot load nor clock
		// read on every commit.
		return false
	}
	ahead := false
	if GatherRecords-1 <= l.slotMask {
		ahead = l.slots[(l.writeNext+GatherRecords-1)&l.slotMask].Load() != nil
	}
	wait := GatherWait(interval, time.Since(l.lastBegan), n, l.opts.NoFsync, ahead)
	if wait <= 0 {
		return false
	}
	start := time.Now()
	if l.holdsProcessor() {
		NanosleepHolding(wait)
	} else {
		Nanosleep(wait)
	}
	l.gatherWait += time.Since(start)
	return true
}

// Nanosleep sleeps for d in nanosleep(2), the whole of d even when a
// signal interrupts it. The writer waits out the commit interval in it,
// not in time.Sleep: a runtime with no goroutine to run waits for its
// timers in epoll with a timeout in whole milliseconds, so a 0.5 ms
// time.Sleep took about 1.7 ms whenever the processors fell idle
// (docs/PERFORMANCE.md, "The commit interval"). The system call holds
// the caller's thread, and the runtime hands its processor to other
// goroutines meanwhile, as it does during the fsync.
func Nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
		// A signal cut it short: sleep the rest, left in ts.
	}
}

// startCommit notes that a commit begins at began, for the next wait, and
// returns the wait for the commit interval before it (0: none), counted
// in Stats.
func (l *Log) startCommit(began time.Time) (gathered time.Duration) {
	l.lastBegan = began
	gathered, l.gatherWait = l.gatherWait, 0
	if gathered > 0 {
		l.counters.gathers.Add(1)
		l.counters.gatheredNanos.Add(int64(gathered))
	}
	return gathered
}

// SetCommitInterval sets the commit interval (Options.CommitInterval) from
// the writer's next wait on and returns the one it replaces. The snapshot
// manager raises it while a snapshot takes a core (snapshot.Options).
// An interval outside 0 to MaxCommitInterval is refused and changes
// nothing.
func (l *Log) SetCommitInterval(d time.Duration) (prev time.Duration, err error) {
	if err := checkCommitInterval(d); err != nil {
		return 0, err
	}
	return time.Duration(l.commitInterval.Swap(int64(d))), nil
}

// RaiseCommitInterval sets the commit interval to d only if the one in
// force is shorter, in one step: a longer interval is never replaced by d
// for a moment, as a set followed by a set back would do. It returns the
// interval in force before and whether it was raised; an interval outside
// 0 to MaxCommitInterval is refused and changes nothing.
func (l *Log) RaiseCommitInterval(d time.Duration) (prev time.Duration, raised bool, err error) {
	if err := checkCommitInterval(d); err != nil {
		return 0, false, err
	}
	for {
		old := l.commitInterval.Load()
		if old >= int64(d) {
			return time.Duration(old), false, nil
		}
		if l.commitInterval.CompareAndSwap(old, int64(d)) {
			return time.Duration(old), true, nil
		}
	}
}

// checkCommitInterval refuses an interval the log's setters cannot put in
// force: one outside 0 to MaxCommitInterval.
func checkCommitInterval(d time.Duration) error {
	if d < 0 || d > MaxCommitInterval {
		return fmt.Errorf("wal: commit interval %v: want 0 to %v", d, MaxCommitInterval)
	}
	return nil
}
