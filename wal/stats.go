package wal

import (
	"sync/atomic"
	"time"
)

// Stats are cumulative counters of a Log since Open.
type Stats struct {
	Records         uint64        // records written
	Batches         uint64        // commits: one write, and one fsync unless NoFsync
	Bytes           uint64        // frame bytes written (without tidwall's length prefixes)
	MaxBatchRecords uint64        // records in the largest commit
	Fsyncs          uint64        // segment file fsyncs, one per commit
	DirFsyncs       uint64        // directory fsyncs: after Open, a truncation, or a commit that wrote to a new segment
	WriteTotal      time.Duration // time spent in the writes of all commits (tidwall's WriteBatch, with a new segment's fsync and creation)
	FsyncTotal      time.Duration // time spent in the fsyncs of all commits
	FsyncMax        time.Duration // longest fsync time of one commit (file and directory)
	Holds           uint64        // commits that waited for a missing record while a later one was ready (Commit.Held)
	HeldTotal       time.Duration // the sum of those waits
	Gathers         uint64        // commits the writer waited for, to let more records join (Commit.Gathered)
	GatheredTotal   time.Duration // the sum of those waits
	TornTailRepairs uint64        // torn tails cut by Open
	TornBytesCut    uint64        // bytes cut by those repairs
}

// counters are the live Stats. Only the writer goroutine (and Open) writes
// them; atomics let Stats read them from any goroutine.
type counters struct {
	records, batches, bytes, maxBatch atomic.Uint64
	fsyncs, dirFsyncs                 atomic.Uint64
	writeNanos                        atomic.Int64
	fsyncNanos, fsyncMaxNanos         atomic.Int64
	tornRepairs, tornBytesCut         atomic.Uint64
	holds                             atomic.Uint64
	heldNanos                         atomic.Int64
	gathers                           atomic.Uint64
	gatheredNanos                     atomic.Int64
	holesSeen                         atomic.Uint64 // holes noteHole began to time (tests wait on it)
}

// countCommit counts a commit of n records and bytes frame bytes. Only the
// writer calls it, so the maximum's load and store do not race.
func (c *counters) countCommit(n, bytes int) {
	c.records.Add(uint64(n))
	c.batches.Add(1)
	c.bytes.Add(uint64(bytes))
	if uint64(n) > c.maxBatch.Load() {
		c.maxBatch.Store(uint64(n))
	}
}

// Stats returns a copy of the log's counters. Each counter is read
// atomically; the set is not a single snapshot.
func (l *Log) Stats() Stats {
	c := &l.counters
	return Stats{
		Records:         c.records.Load(),
		Batches:         c.batches.Load(),
		Bytes:           c.bytes.Load(),
		MaxBatchRecords: c.maxBatch.Load(),
		Fsyncs:          c.fsyncs.Load(),
		DirFsyncs:       c.dirFsyncs.Load(),
		WriteTotal:      time.Duration(c.writeNanos.Load()),
		FsyncTotal:      time.Duration(c.fsyncNanos.Load()),
		FsyncMax:        time.Duration(c.fsyncMaxNanos.Load()),
		Holds:           c.holds.Load(),
		HeldTotal:       time.Duration(c.heldNanos.Load()),
		Gathers:         c.gathers.Load(),
		GatheredTotal:   time.Duration(c.gatheredNanos.Load()),
		TornTailRepairs: c.tornRepairs.Load(),
		TornBytesCut:    c.tornBytesCut.Load(),
	}
}
