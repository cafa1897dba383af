package wal

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"marketd/core"
	"marketd/wal/record"
	"marketd/wal/record/recordgen"
)

// BenchmarkAppend measures the commit pipeline: producers each reserve,
// append a trade record and wait for its acknowledgement, as market actors
// answering requests do. With fsync on, throughput comes from many
// producers filling each commit.
func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct {
		noFsync   bool
		producers int
	}{
		{true, 64},
		{false, 1},
		{false, 1024},
	} {
		name := fmt.Sprintf("fsync=%s/producers=%d", map[bool]string{true: "off", false: "on"}[bc.noFsync], bc.producers)
		b.Run(name, func(b *testing.B) { benchmarkAppend(b, bc.noFsync, bc.producers) })
	}
}

func benchmarkAppend(b *testing.B, noFsync bool, producers int) {
	opts := testOptions()
	opts.NoFsync = noFsync
	l, err := Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	l.Start()
	rec := recordgen.Trade(1)
	b.SetBytes(int64(len(record.AppendFramed(nil, 1, rec))))
	b.ReportAllocs()
	b.SetParallelism(max(1, producers/runtime.GOMAXPROCS(0)))
	start := time.Now()
	b.ResetTimer()
	produce := func(done chan error) bool {
		seq, err := l.Next()
		if err != nil {
			b.Error(err)
			return false
		}
		l.Append(seq, rec, done)
		if err := <-done; err != nil {
			b.Error(err)
			return false
		}
		return true
	}
	if producers == 1 {
		done := make(chan error, 1)
		for i := 0; i < b.N && produce(done); i++ {
		}
	} else {
		b.RunParallel(func(pb *testing.PB) {
			done := make(chan error, 1)
			for pb.Next() && produce(done) {
			}
		})
	}
	b.StopTimer()
	elapsed := time.Since(start)
	st := l.Stats()
	b.ReportMetric(float64(st.Records)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(st.Records)/float64(max(1, st.Batches)), "records/batch")
	if st.Batches > 0 && !noFsync {
		b.ReportMetric(float64(st.FsyncTotal.Microseconds())/float64(st.Batches), "fsync-µs/batch")
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReplay replays a log of trade records (about 290 bytes each)
// from the first, decoding and verifying every one.
func BenchmarkReplay(b *testing.B) {
	const records = 200_000
	dir := b.TempDir()
	opts := testOptions()
	opts.NoFsync = true
	l, err := Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	l.Start()
	var size int64
	for seq := uint64(1); seq <= records; seq++ {
		s, err := l.Next()
		if err != nil || s != seq {
			b.Fatalf("next: %d, %v", s, err)
		}
		rec := recordgen.Trade(seq)
		size += int64(len(record.AppendFramed(nil, seq, rec)))
		l.Append(seq, rec, nil)
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	if l, err = Open(dir, opts); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}()
	b.SetBytes(size)
	b.ReportAllocs()
	start := time.Now()
	n, iterations := 0, 0
	for b.Loop() {
		iterations++
		n = 0
		if err := l.Replay(1, func(seq uint64, rec *core.Record) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	if n != records {
		b.Fatalf("replayed %d records, want %d", n, records)
	}
	b.ReportMetric(float64(records*iterations)/time.Since(start).Seconds(), "records/s")
}
