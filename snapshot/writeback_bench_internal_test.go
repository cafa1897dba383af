package snapshot

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marketd/wal"
	"marketd/wal/record/recordgen"
)

// BenchmarkWritebackBesideLog writes 64 MB as a snapshot file is written
// (1 MiB writes, the writeback started every step and the step before
// awaited, a final fsync) while 16 goroutines append to a log with fsync
// on and wait for each record, and reports the appends' latency during the
// write against a window of the same length before it: the share of the
// disk a snapshot's writes take from the log's fsyncs (docs/PERFORMANCE.md,
// "The snapshot's second").
func BenchmarkWritebackBesideLog(b *testing.B) {
	for _, c := range []struct {
		name string
		step int64
	}{{"step=1MiB", 1 << 20}, {"step=256KiB", 256 << 10}, {"step=128KiB", 128 << 10}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				writebackBesideLog(b, c.step)
			}
		})
	}
}

func writebackBesideLog(b *testing.B, step int64) {
	b.StopTimer()
	defer b.StartTimer()
	dir := b.TempDir()
	l, err := wal.Open(filepath.Join(dir, "wal"), wal.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	l.Start()
	defer func() {
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}()
	rec := recordgen.Trade(1)
	var window atomic.Int32 // 0: baseline, 1: write, 2: none
	window.Store(2)
	var stop atomic.Bool
	var mu sync.Mutex
	var lat [2][]time.Duration
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
				l.Append(seq, rec, done)
				if err := <-done; err != nil {
					b.Error(err)
					return
				}
				d := time.Since(began)
				if w < 2 && window.Load() == w {
					mu.Lock()
					lat[w] = append(lat[w], d)
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	f, err := os.Create(filepath.Join(dir, "snap"))
	if err != nil {
		b.Fatal(err)
	}
	wb := newWriteback(f)
	wb.step = step
	buf := make([]byte, 1<<20)
	b.StartTimer()
	window.Store(1)
	began := time.Now()
	var size int64
	for range 64 {
		n, err := f.Write(buf)
		if err != nil {
			b.Fatal(err)
		}
		size += int64(n)
		if err := wb.wrote(size); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	took := time.Since(began)
	window.Store(0)
	b.StopTimer()
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	time.Sleep(took)
	window.Store(2)
	stop.Store(true)
	wg.Wait()
	q := func(s []time.Duration, p float64) float64 {
		if len(s) == 0 {
			return 0
		}
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(float64(len(s))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(took.Microseconds())/1000, "write-ms")
	b.ReportMetric(q(lat[1], 0.5), "during-p50-ms")
	b.ReportMetric(q(lat[1], 0.9), "during-p90-ms")
	b.ReportMetric(q(lat[1], 0.999), "during-p99.9-ms")
	b.ReportMetric(q(lat[0], 0.5), "baseline-p50-ms")
	b.ReportMetric(q(lat[0], 0.9), "baseline-p90-ms")
	b.ReportMetric(q(lat[0], 0.999), "baseline-p99.9-ms")
}
