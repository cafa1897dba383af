package bench

import (
	"testing"
	"time"

	"marketd/internal/fstype"
	"marketd/wal"
)

// BenchmarkHTTP measures the no-op handler, then the trade endpoint, over the
// same driver in the same run, and reports each trade run's throughput as a
// ratio of the no-op's (the target, docs/PERFORMANCE.md, "HTTP path": at least
// 0.5 at 64 connections). Run noop and the trades together: ratio-vs-noop is
// left out when noop did not run in this invocation.
func BenchmarkHTTP(b *testing.B) {
	// The sub-benchmarks' logs go to their own b.TempDir(), under the
	// same parent directory as this one.
	dir := b.TempDir()
	fs, inMemory, err := fstype.Of(dir)
	switch {
	case err != nil:
		b.Fatal(err)
	case inMemory:
		b.Fatalf("temporary directories (%s) are on %s, where fsync costs nothing; set TMPDIR to a directory on disk", dir, fs)
	}
	b.Logf("the logs are in temporary directories on %s", fs)

	// noopPerSecond is the no-op's throughput in its last (largest b.N)
	// run, set by the noop sub-benchmark before the trades run.
	var noopPerSecond float64
	b.Run("noop", func(b *testing.B) {
		b.ReportAllocs()
		addr := startNoop(b)
		r := drive(b, addr, tradePath, noopWorkloads(8))
		report(b, r)
		noopPerSecond = r.perSecond()
	})

	// Bounds of any trade endpoint on this machine: a group commit of
	// plain bytes to a plain file (startFsyncOnly), then marketd's log
	// (startLogOnly); one durable record per request and no other work.
	b.Run("fsync-only", func(b *testing.B) {
		b.ReportAllocs()
		r := drive(b, startFsyncOnly(b), tradePath, noopWorkloads(8))
		report(b, r)
		reportRatio(b, r, noopPerSecond)
	})
	b.Run("log-only", func(b *testing.B) {
		b.ReportAllocs()
		addr, log := startLogOnly(b)
		before := log.Stats()
		r := drive(b, addr, tradePath, noopWorkloads(8))
		report(b, r)
		reportRatio(b, r, noopPerSecond)
		reportCommits(b, before, log.Stats(), true)
	})

	for _, c := range []struct {
		name    string
		markets int
		fsync   bool
		// idempotent sends an Idempotency-Key with every request; batch,
		// when not 0, sends batches of that many trades.
		idempotent bool
		batch      int
	}{
		{"trade-8-markets", 8, true, false, 0},
		{"trade-8-markets-idempotent", 8, true, true, 0},
		{"batch-20-8-markets", 8, true, false, 20},
		{"trade-1-market", 1, true, false, 0},
		{"trade-8-markets-fsync-off", 8, false, false, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			ts := startTrade(b, c.fsync)
			loads := ts.setup(b, c.markets)
			path := tradePath
			if c.batch > 0 {
				loads, path = batchWorkloads(loads, c.batch), batchPath
			}
			for i := range loads {
				loads[i].idempotent = c.idempotent
			}
			before, tradesBefore := ts.log.Stats(), ts.trades()
			r := drive(b, ts.addr, path, loads)
			after := ts.log.Stats()
			report(b, r)
			reportRatio(b, r, noopPerSecond)
			reportCommits(b, before, after, c.fsync)
			if c.batch > 0 {
				// A refused item is still a 200: count the trades.
				if got, want := ts.trades()-tradesBefore, uint64(b.N*c.batch); got != want {
					b.Fatalf("%d trades for %d batches of %d", got, b.N, c.batch)
				}
				b.ReportMetric(r.perSecond()*float64(c.batch), "trades/s")
			}
		})
	}
}

// reportRatio reports a run's throughput over the no-op's, when the no-op
// ran in this invocation (noopPerSecond > 0).
func reportRatio(b *testing.B, r result, noopPerSecond float64) {
	if noopPerSecond > 0 {
		b.ReportMetric(r.perSecond()/noopPerSecond, "ratio-vs-noop")
	}
}

// reportCommits reports how the log's group commit behaved between two
// readings of its counters: records per commit, and the time in fsync per
// commit (file and directory) when fsync is on.
func reportCommits(b *testing.B, before, after wal.Stats, fsync bool) {
	commits := after.Batches - before.Batches
	if commits == 0 {
		return
	}
	b.ReportMetric(float64(after.Records-before.Records)/float64(commits), "records/commit")
	if fsync {
		d := after.FsyncTotal - before.FsyncTotal
		b.ReportMetric(float64(d)/float64(time.Millisecond)/float64(commits), "fsync-ms/commit")
	}
}
