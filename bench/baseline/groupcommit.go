package baseline

import (
	"os"
	"time"

	"marketd/wal"
)

// Commit describes one commit of GroupCommit.
type Commit struct {
	Records      int           // requests it answered
	Write, Fsync time.Duration // its write; its fsync (0 without)
}

// CommitOptions is how GroupCommit waits, as marketd's log may: its
// commit interval (0 to wal.MaxCommitInterval; 0: never), and whether its
// fsync and the interval's sleep keep the goroutine's processor, by raw
// system calls, as the log's writer does with a spare processor
// (wal.Options.FsyncHoldsProcessor, wal.FsyncHolding).
type CommitOptions struct {
	Interval      time.Duration
	HoldProcessor bool
}

// GroupCommit commits the requests of waiting to f until waiting is closed:
// it takes the requests waiting at once (up to maxBatch), appends the bytes
// of each (data) to one buffer, writes it with one write, fsyncs f if fsync
// is set, tells observe (when not nil) and answers each request with the
// outcome (answer). There is no log library, no frame, no directory fsync:
// it is the least a group commit must do before it answers. After a failed
// write or fsync every later request fails too: nothing is retried.
//
// With an interval (co.Interval) it waits, after each
// commit, as marketd's log does with its commit interval (wal.GatherWait,
// in wal.Nanosleep): for the rest of the interval since the commit began,
// when the commit was a group of 2 to wal.GatherRecords-1 requests and
// fewer than wal.GatherRecords wait. Without one it never waits.
func GroupCommit[T any](f *os.File, waiting <-chan T, maxBatch int, fsync bool, co CommitOptions,
	data func(T) []byte, answer func(T, error), observe func(Commit)) {
	var buf []byte
	batch := make([]T, 0, maxBatch)
	var failed error
	for req := range waiting {
		batch = append(batch[:0], req)
	gather:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-waiting:
				if !ok {
					break gather
				}
				batch = append(batch, r)
			default:
				break gather
			}
		}
		c := Commit{Records: len(batch)}
		began := time.Now()
		if failed == nil {
			buf = buf[:0]
			for _, r := range batch {
				buf = append(buf, data(r)...)
			}
			writing := time.Now()
			_, failed = f.Write(buf)
			wrote := time.Now()
			c.Write = wrote.Sub(writing)
			if failed == nil && fsync {
				if co.HoldProcessor {
					failed = wal.FsyncHolding(f)
				} else {
					failed = f.Sync()
				}
				c.Fsync = time.Since(wrote)
			}
		}
		if observe != nil {
			observe(c)
		}
		for _, r := range batch {
			answer(r, failed)
		}
		wait := wal.GatherWait(co.Interval, time.Since(began), len(batch), !fsync || failed != nil,
			len(waiting) >= wal.GatherRecords)
		switch {
		case wait <= 0:
		case co.HoldProcessor:
			wal.NanosleepHolding(wait)
		default:
			wal.Nanosleep(wait)
		}
	}
}
