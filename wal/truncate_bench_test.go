package wal

import (
	"testing"
)

// BenchmarkTruncateStep measures one step of a stepped trim of a log of
// 1 MiB segments, as a periodic snapshot takes it: TruncateFront about
// 8,192 records past the first, cut mid-segment or at the last record of
// a segment (SegmentStarts). A step holds the log's writer for its whole
// time, tidwall's rewrite of the kept part of a segment, the unlinks and
// the directory fsync included (docs/PERFORMANCE.md, "The second after a
// snapshot").
func BenchmarkTruncateStep(b *testing.B) {
	const stepRecords = 8192
	for _, atEnd := range []bool{false, true} {
		name := "mid-segment"
		if atEnd {
			name = "segment-end"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			opts := testOptions()
			createLogB(b, dir, (b.N+1)*stepRecords, opts)
			l, err := Open(dir, opts)
			if err != nil {
				b.Fatal(err)
			}
			l.Start()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				first := l.FirstSeq()
				at := first + stepRecords
				if atEnd {
					b.StopTimer()
					starts, err := l.SegmentStarts()
					if err != nil {
						b.Fatal(err)
					}
					for _, s := range starts {
						if s-1 > first && s-1 <= first+stepRecords {
							at = s - 1
						}
					}
					b.StartTimer()
				}
				if err := l.TruncateFront(b.Context(), at); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// createLogB writes records 1..n to a new log in dir and closes it.
func createLogB(b *testing.B, dir string, n int, opts Options) {
	l, err := Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	l.Start()
	dones := make([]chan error, 0, 4096)
	for i := range n {
		seq, err := l.Next()
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		l.Append(seq, recordFor(seq), done)
		dones = append(dones, done)
		if len(dones) == cap(dones) || i == n-1 {
			for _, d := range dones {
				if err := <-d; err != nil {
					b.Fatal(err)
				}
			}
			dones = dones[:0]
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}
