package baseline

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestGroupCommitInterval checks that GroupCommit waits out its interval
// after a commit of a group, as marketd's log does (wal.GatherWait), and
// never after a lone request or without an interval: rounds of requests,
// each round sent once the last was answered, take at least an interval
// per round after the first only when each round is a group; and the
// same with the processor held through the fsync and the wait.
func TestGroupCommitInterval(t *testing.T) {
	const interval = 100 * time.Millisecond
	const rounds = 3
	for _, tt := range []struct {
		name     string
		interval time.Duration
		group    int
		hold     bool
		waits    bool
	}{
		{"groups of two with an interval", interval, 2, false, true},
		{"lone requests with an interval", interval, 1, false, false},
		{"groups of two without an interval", 0, 2, false, false},
		{"groups of two with an interval, holding the processor", interval, 2, true, true},
		{"lone requests with an interval, holding the processor", interval, 1, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "commits"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			waiting := make(chan chan error, 2*tt.group)
			done := make(chan struct{})
			commits := 0
			commit := func() {
				defer close(done)
				GroupCommit(f, waiting, 64, true, CommitOptions{Interval: tt.interval, HoldProcessor: tt.hold}, func(chan error) []byte { return []byte("record\n") },
					func(r chan error, err error) { r <- err }, func(Commit) { commits++ })
			}
			start := time.Now()
			for round := range rounds {
				answers := make([]chan error, tt.group)
				for i := range answers {
					answers[i] = make(chan error, 1)
					waiting <- answers[i]
				}
				// The first round is queued before the committer starts,
				// each later one while it waits after the last: a group
				// of tt.group each time.
				if round == 0 {
					go commit()
				}
				for _, a := range answers {
					if err := <-a; err != nil {
						t.Fatal(err)
					}
				}
			}
			took := time.Since(start)
			close(waiting)
			<-done
			least := time.Duration(rounds-1) * interval
			if tt.waits && took < least {
				t.Errorf("%d rounds took %v; want at least %v, an interval after each group", rounds, took, least)
			}
			if !tt.waits && took >= least {
				t.Errorf("%d rounds took %v; want under %v: no wait", rounds, took, least)
			}
			if tt.waits && commits != rounds {
				t.Errorf("%d commits; want %d, one per round", commits, rounds)
			}
		})
	}
}
