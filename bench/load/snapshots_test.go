package load

import (
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// TestMarkSnapshots marks the seconds a snapshot touches and splits the
// latency between them and the others.
func TestMarkSnapshots(t *testing.T) {
	start := time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC)
	r := splitRun(t, start, 2, 3) // 1 ms, and 40 ms in seconds 2 and 3
	r.MarkSnapshots([]Window{
		{Start: start.Add(-10 * time.Second), End: start.Add(-9 * time.Second)},              // before the run
		{Start: start.Add(2200 * time.Millisecond), End: start.Add(3100 * time.Millisecond)}, // seconds 2 and 3
		{Start: start.Add(20 * time.Second), End: start.Add(21 * time.Second)},               // after it
	})
	var marked []int
	for _, s := range r.Series {
		if s.Snapshot {
			marked = append(marked, s.T)
		}
	}
	if len(r.Snapshots) != 1 || len(marked) != 2 || marked[0] != 2 || marked[1] != 3 {
		t.Fatalf("snapshots %+v, seconds marked %v; want one snapshot, seconds 2 and 3", r.Snapshots, marked)
	}
	if r.DuringSnapshots == nil || r.DuringSnapshots.Max < 39 || r.OutsideSnapshots == nil || r.OutsideSnapshots.Max > 1.1 {
		t.Fatalf("during %+v, outside %+v; want 40 ms during and 1 ms outside", r.DuringSnapshots, r.OutsideSnapshots)
	}
}

// TestSlowestKept keeps a worker's slowest requests whatever their order.
func TestSlowestKept(t *testing.T) {
	rec := newRecorder(time.Now(), make(chan secondSample, 100), make(chan *hdrhistogram.Histogram))
	for i := range 1000 {
		// Latencies 0..999 ms in a scrambled order.
		ms := (i * 7919) % 1000
		rec.record(rec.start, time.Duration(ms)*time.Millisecond, 200, OpBuy)
	}
	if len(rec.slowest) != slowestKept {
		t.Fatalf("kept %d, want %d", len(rec.slowest), slowestKept)
	}
	for _, s := range rec.slowest {
		if s.latency < time.Duration(1000-slowestKept)*time.Millisecond {
			t.Fatalf("kept %v, not among the %d slowest", s.latency, slowestKept)
		}
	}
}
