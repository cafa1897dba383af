package wal

import (
	"sync"
	"testing"
	"time"
)

// TestGatherWait checks the writer's choice to wait out the commit
// interval: only with fsync on, an interval set, a commit of 2 to
// GatherRecords-1 records, and fewer than GatherRecords records waiting;
// for what is left of the interval since the commit began.
func TestGatherWait(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name     string
		interval time.Duration
		since    time.Duration
		n        int
		noFsync  bool
		ahead    bool
		want     time.Duration
	}{
		{"a group of two", ms, ms / 4, 2, false, false, 3 * ms / 4},
		{"the largest group that waits", ms, ms / 4, GatherRecords - 1, false, false, 3 * ms / 4},
		{"a group of GatherRecords", ms, ms / 4, GatherRecords, false, false, 0},
		{"a lone record", ms, ms / 4, 1, false, false, 0},
		{"no interval", 0, ms / 4, 8, false, false, 0},
		{"fsync off", ms, ms / 4, 8, true, false, 0},
		{"enough records waiting", ms, ms / 4, 8, false, true, 0},
		{"the interval already past", ms, 2 * ms, 8, false, false, 0},
		{"the interval just past", ms, ms, 8, false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GatherWait(tt.interval, tt.since, tt.n, tt.noFsync, tt.ahead); got != tt.want {
				t.Errorf("GatherWait(%v, %v, %d, %v, %v) = %v, want %v",
					tt.interval, tt.since, tt.n, tt.noFsync, tt.ahead, got, tt.want)
			}
		})
	}
}

// appendFrom has producers goroutines append records each, one after the
// other (the next once the last is durable), and returns the first error.
// With start, every producer's first record is appended before the writer
// starts, so that the first commit takes one from each.
func appendFrom(l *Log, producers, records int, start bool) error {
	errs := make(chan error, producers)
	var first, all sync.WaitGroup
	first.Add(producers)
	for range producers {
		all.Go(func() {
			for i := range records {
				seq, err := l.Next()
				if err != nil {
					errs <- err
					if i == 0 {
						first.Done()
					}
					return
				}
				done := make(chan error, 1)
				l.Append(seq, recordFor(seq), done)
				if i == 0 {
					first.Done()
				}
				if err := <-done; err != nil {
					errs <- err
					return
				}
			}
		})
	}
	first.Wait()
	if start {
		l.Start()
	}
	all.Wait()
	close(errs)
	return <-errs
}

// TestCommitInterval checks the commit interval on a log with fsync on:
// with many callers the writer waits, and a commit that follows a wait
// begins at least the interval after the one before it; the waits are
// counted in Stats and reported in Commit.Gathered; a lone caller, a log
// without an interval and a log with fsync off never wait; and every
// record is still acknowledged and replayed.
func TestCommitInterval(t *testing.T) {
	const interval = MaxCommitInterval
	tests := []struct {
		name      string
		interval  time.Duration
		noFsync   bool
		producers int
		wantWaits bool
	}{
		{"eight callers", interval, false, 8, true},
		{"a lone caller", interval, false, 1, false},
		{"no interval", 0, false, 8, false},
		{"fsync off", interval, true, 8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := &commitLog{}
			opts := testOptions()
			opts.NoFsync, opts.Observer, opts.CommitInterval = tt.noFsync, obs, tt.interval
			l := mustOpen(t, t.TempDir(), opts)
			const records = 6
			if err := appendFrom(l, tt.producers, records, true); err != nil {
				t.Fatal(err)
			}
			mustClose(t, l)
			st := l.Stats()
			obs.mu.Lock()
			defer obs.mu.Unlock()
			var waits uint64
			var waited time.Duration
			for i, c := range obs.commits {
				if c.Gathered == 0 {
					continue
				}
				waits++
				waited += c.Gathered
				if i == 0 {
					t.Fatalf("the first commit reports a wait of %v", c.Gathered)
				}
				if gap := c.Began.Sub(obs.commits[i-1].Began); gap < tt.interval {
					t.Errorf("commit %d (%d records) began %v after the one before, having waited %v; want at least %v",
						i, c.Records, gap, c.Gathered, tt.interval)
				}
			}
			if waits != st.Gathers || waited != st.GatheredTotal {
				t.Errorf("commits report %d waits, %v in all; the log counts %d, %v", waits, waited, st.Gathers, st.GatheredTotal)
			}
			if (waits > 0) != tt.wantWaits {
				t.Errorf("%d of %d commits waited for the interval; want waits: %v", waits, len(obs.commits), tt.wantWaits)
			}
			if want := uint64(tt.producers * records); st.Records != want {
				t.Errorf("%d records written, want %d", st.Records, want)
			}
			r := mustOpen(t, l.dir, testOptions())
			defer mustClose(t, r)
			checkReplay(t, r, 1, uint64(tt.producers*records))
		})
	}
}

// TestSetCommitInterval checks that the commit interval set on a running
// log applies from the writer's next wait: a log opened without one waits
// once it is set and no more once it is set back to 0 (but for a wait
// already begun, which the next commit reports); an interval out of range
// is refused and changes nothing.
func TestSetCommitInterval(t *testing.T) {
	l := mustOpen(t, t.TempDir(), testOptions())
	defer mustClose(t, l)
	for _, d := range []time.Duration{-1, MaxCommitInterval + 1} {
		if _, err := l.SetCommitInterval(d); err == nil {
			t.Errorf("SetCommitInterval(%v) succeeded", d)
		}
	}
	if prev, err := l.SetCommitInterval(MaxCommitInterval); err != nil || prev != 0 {
		t.Fatalf("SetCommitInterval(%v) = %v, %v; want the log's own, 0", MaxCommitInterval, prev, err)
	}
	if err := appendFrom(l, 8, 6, true); err != nil {
		t.Fatal(err)
	}
	waits := l.Stats().Gathers
	if waits == 0 {
		t.Fatalf("no commit waited with the interval set")
	}
	if prev, err := l.SetCommitInterval(0); err != nil || prev != MaxCommitInterval {
		t.Fatalf("SetCommitInterval(0) = %v, %v; want %v", prev, err, MaxCommitInterval)
	}
	if err := appendFrom(l, 8, 6, false); err != nil {
		t.Fatal(err)
	}
	if got := l.Stats().Gathers; got > waits+1 {
		t.Errorf("%d commits waited after the interval was set to 0", got-waits)
	}
}

// TestRaiseCommitInterval checks that RaiseCommitInterval puts an interval
// in force only over a shorter one, reports the one before either way, and
// refuses one out of range without a change.
func TestRaiseCommitInterval(t *testing.T) {
	const us = time.Microsecond
	l := mustOpen(t, t.TempDir(), testOptions())
	defer mustClose(t, l)
	tests := []struct {
		name       string
		d          time.Duration
		wantPrev   time.Duration
		wantRaised bool
		wantErr    bool
		wantAfter  time.Duration
	}{
		{"over none", 500 * us, 0, true, false, 500 * us},
		{"over a shorter one", 800 * us, 500 * us, true, false, 800 * us},
		{"not over a longer one", 300 * us, 800 * us, false, false, 800 * us},
		{"not over an equal one", 800 * us, 800 * us, false, false, 800 * us},
		{"negative", -1, 0, false, true, 800 * us},
		{"over the maximum", MaxCommitInterval + 1, 0, false, true, 800 * us},
	}
	for _, tt := range tests {
		prev, raised, err := l.RaiseCommitInterval(tt.d)
		if (err != nil) != tt.wantErr || prev != tt.wantPrev || raised != tt.wantRaised {
			t.Errorf("%s: RaiseCommitInterval(%v) = %v, %v, %v; want %v, %v, error %v", tt.name, tt.d, prev, raised, err, tt.wantPrev, tt.wantRaised, tt.wantErr)
		}
		if got := time.Duration(l.commitInterval.Load()); got != tt.wantAfter {
			t.Errorf("%s: the interval in force is %v, want %v", tt.name, got, tt.wantAfter)
		}
	}
}
