package load

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCompareSettles: Compare settles once before each target's turn,
// before its warm-up when there is one (the measured run then follows the
// warm-up at once) and before the run itself when there is none; a settle
// that fails ends the comparison with its error.
func TestCompareSettles(t *testing.T) {
	c, served, mix, skew := serveNoop(t)
	targets := []*Target{NewTarget("a", c, testFixture(2, 2)), NewTarget("b", c, testFixture(2, 2))}
	for _, warmup := range []time.Duration{0, 100 * time.Millisecond} {
		var settles []int64 // requests served when each settle was called
		o := Options{Conns: 2, Duration: 100 * time.Millisecond, Mix: mix, Skew: skew, Seed: 1,
			Settle: func() error { settles = append(settles, served.Load()); return nil }}
		before := served.Load()
		cmp, err := Compare(context.Background(), targets, 2, warmup, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(settles) != len(cmp.Runs) || len(cmp.Runs) != 4 {
			t.Fatalf("warmup %v: %d settles for %d runs, want 4 of each", warmup, len(settles), len(cmp.Runs))
		}
		// From one settle to the next (to the end, for the last) come one
		// turn's requests: its run's alone without a warm-up, and its
		// warm-up's too with one. A settle between a warm-up and its run
		// would come after the first warm-up's requests, and leave the last
		// run's alone after it.
		if settles[0] != before {
			t.Errorf("warmup %v: first settle after %d requests, want %d", warmup, settles[0], before)
		}
		for i, r := range cmp.Runs {
			next := served.Load()
			if i+1 < len(settles) {
				next = settles[i+1]
			}
			turn := next - settles[i]
			if (warmup == 0 && turn != r.Requests) || (warmup > 0 && turn <= r.Requests) {
				t.Errorf("warmup %v: %d requests in turn %d, its run's %d", warmup, turn, i, r.Requests)
			}
		}
	}
	errRefused := errors.New("refused")
	o := Options{Conns: 2, Duration: 100 * time.Millisecond, Mix: mix, Skew: skew, Seed: 1,
		Settle: func() error { return errRefused }}
	if _, err := Compare(context.Background(), targets, 1, 50*time.Millisecond, o); !errors.Is(err, errRefused) {
		t.Errorf("Compare with a failing settle: %v, want %v", err, errRefused)
	}
}

// TestWarmupOptions: the warm-up is unmeasured, silent and settles; the
// run after it keeps everything else and does not settle again.
func TestWarmupOptions(t *testing.T) {
	measured := func(string) func() { return nil }
	o := Options{Conns: 3, Duration: time.Minute, Rate: 10, Seed: 7, Progress: new(nopWriter),
		Measured: measured, Settle: func() error { return nil }}
	warm, run := o.Warmup(2 * time.Second)
	if warm.Duration != 2*time.Second || warm.Progress != nil || warm.Measured != nil || warm.Settle == nil ||
		warm.Conns != 3 || warm.Rate != 10 || warm.Seed != 7 {
		t.Errorf("warm-up options %+v: want 2s, no progress, unmeasured, settling, the rest of o", warm)
	}
	if run.Duration != time.Minute || run.Progress == nil || run.Measured == nil || run.Settle != nil || run.Conns != 3 {
		t.Errorf("run options %+v: want o without its settle", run)
	}
}

type nopWriter struct{}

func (*nopWriter) Write(p []byte) (int, error) { return len(p), nil }
