package wal

import (
	"testing"
	"time"
)

// BenchmarkNext measures Next alone, contended: eight goroutines per
// processor reserve, as the market actors do, while another releases
// what they reserved every 20 us, as the writer does after each commit.
// No record is appended, so the writer's own work is left out.
func BenchmarkNext(b *testing.B) {
	opts := testOptions()
	opts.NoFsync = true
	opts.QueueRecords = 1 << 24
	l, err := Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Microsecond):
				l.releaseReserved()
			}
		}
	}()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Next(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	close(stop)
	<-stopped
	// Nothing was appended: close without writing, the reservations are
	// released, so Close's sweep finds empty slots only.
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}

// releaseReserved is the writer's release after a commit (publishReleased)
// of every seq reserved so far, for BenchmarkNext.
func (l *Log) releaseReserved() { l.publishReleased(l.lastReserved()) }
