package snapshot

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPacerRests checks each rest against the work before it: work of w at
// a share s rests w(1-s)/s, at most maxRestPerChunk; a share of 1 or a nil
// pacer never rests; the longest work excludes the rests; a done context
// ends the rest with its cause, unpaced too.
func TestPacerRests(t *testing.T) {
	cases := []struct {
		name  string
		share float64
		work  time.Duration
		want  time.Duration
	}{
		{"quarter", 0.25, 10 * time.Millisecond, 30 * time.Millisecond},
		{"half", 0.5, 10 * time.Millisecond, 10 * time.Millisecond},
		{"capped", 0.25, time.Second, maxRestPerChunk},
		{"whole core", 1, 10 * time.Millisecond, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clock := time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)
			var waited []time.Duration
			p := &pacer{share: c.share, now: func() time.Time { return clock }, since: clock,
				wait: func(_ context.Context, d time.Duration) error {
					waited = append(waited, d)
					clock = clock.Add(d)
					return nil
				}}
			for range 3 {
				clock = clock.Add(c.work)
				if err := p.rest(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if p.longest != c.work {
				t.Fatalf("longest work %v, want %v: rests and yields are not work", p.longest, c.work)
			}
			if c.want == 0 {
				if len(waited) != 0 {
					t.Fatalf("rested %v at share %v, want no rest", waited, c.share)
				}
				return
			}
			for _, d := range waited {
				if d != c.want {
					t.Fatalf("work %v at share %v rested %v, want %v each", c.work, c.share, waited, c.want)
				}
			}
			if len(waited) != 3 || p.rested != 3*c.want {
				t.Fatalf("rested %v (%v in all), want 3 rests of %v", waited, p.rested, c.want)
			}
		})
	}
	var none *pacer
	if err := none.rest(context.Background()); err != nil {
		t.Fatalf("nil pacer: %v", err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stopping")
	cancel(stop)
	for _, share := range []float64{0.25, 1} {
		if err := newPacer(share, 0).rest(ctx); !errors.Is(err, stop) {
			t.Fatalf("rest at share %v with a done context = %v, want its cause", share, err)
		}
	}
}
