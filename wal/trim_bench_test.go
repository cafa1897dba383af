package wal

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkTrimWhileCommitting trims a log of about 70 segments of 1 MiB
// while 16 goroutines append records and wait for each, as a periodic
// snapshot trims the log while trading goes on, in the two shapes the
// snapshot manager has used: steps, a truncation to the last record of
// every second segment with 20 ms rests (8,192 trade records span two or
// three segments; every truncation
// holding the writer for its fixed cost: tidwall's rewrite of the kept
// record and its fsync, the directory's fsync); and one, a single
// truncation (TrimFront) whose dropped files are freed afterwards with 10
// ms rests. It reports the time the writer spent on truncations
// (held-ms, and the longest, held-max-ms), the trim's duration, and the
// longest append, from Append to its answer, during the trim
// (during-max-ms) and during a window of the same length before it
// (baseline-max-ms) (docs/PERFORMANCE.md, "The snapshot's second").
func BenchmarkTrimWhileCommitting(b *testing.B) {
	for _, shape := range []string{"steps", "one"} {
		b.Run(shape, func(b *testing.B) {
			for range b.N {
				trimWhileCommitting(b, shape == "one")
			}
		})
	}
}

func trimWhileCommitting(b *testing.B, one bool) {
	b.StopTimer()
	defer b.StartTimer()
	dir := b.TempDir()
	opts := testOptions()
	fast := opts
	fast.NoFsync = true
	createLogB(b, dir, 23_000, fast)
	l, err := Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	l.Start()
	defer func() {
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}()
	starts, err := l.SegmentStarts()
	if err != nil {
		b.Fatal(err)
	}
	var window atomic.Int32 // 0: baseline, 1: trim, 2: none
	window.Store(2)
	var stop atomic.Bool
	var mu sync.Mutex
	var maxIn [2]time.Duration
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			done := make(chan error, 1)
			for !stop.Load() {
				w := window.Load()
				seq, err := l.Next()
				if err != nil {
					b.Error(err)
					return
				}
				began := time.Now()
				l.Append(seq, recordFor(seq), done)
				if err := <-done; err != nil {
					b.Error(err)
					return
				}
				d := time.Since(began)
				if w < 2 && window.Load() == w {
					mu.Lock()
					maxIn[w] = max(maxIn[w], d)
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // warm up
	last := starts[len(starts)-2] - 1  // the end of the last segment but one
	var cuts []uint64
	if one {
		cuts = []uint64{last}
	} else {
		for i := 2; i < len(starts)-1; i += 2 {
			cuts = append(cuts, starts[i]-1)
		}
		if cuts[len(cuts)-1] != last {
			cuts = append(cuts, last)
		}
	}
	ctx := context.Background()
	var held, longest time.Duration
	b.StartTimer()
	window.Store(1)
	began := time.Now()
	for i, at := range cuts {
		if i > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		rest := time.Duration(0)
		if one {
			rest = 10 * time.Millisecond
		}
		h, err := l.TrimFront(ctx, at, rest)
		if err != nil {
			b.Fatal(err)
		}
		held += h
		longest = max(longest, h)
	}
	took := time.Since(began)
	window.Store(0)
	b.StopTimer()
	time.Sleep(took)
	window.Store(2)
	stop.Store(true)
	wg.Wait()
	if got, _ := l.SegmentStarts(); slices.Index(got, last) != 0 && l.FirstSeq() != last {
		b.Fatalf("after the trim the log starts at %d (segments %v), want %d", l.FirstSeq(), got[:min(3, len(got))], last)
	}
	b.ReportMetric(float64(len(starts)), "segments")
	b.ReportMetric(float64(len(cuts)), "truncations")
	b.ReportMetric(float64(held.Microseconds())/1000, "held-ms")
	b.ReportMetric(float64(longest.Microseconds())/1000, "held-max-ms")
	b.ReportMetric(float64(took.Microseconds())/1000, "trim-ms")
	b.ReportMetric(float64(maxIn[1].Microseconds())/1000, "during-max-ms")
	b.ReportMetric(float64(maxIn[0].Microseconds())/1000, "baseline-max-ms")
}
