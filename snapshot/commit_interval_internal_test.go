package snapshot

import (
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"
)

// intervalLog is a trimLog whose commit interval can be raised and set;
// it records every interval put in force.
type intervalLog struct {
	trimLog
	interval time.Duration
	fail     error
	set      []time.Duration
}

func (l *intervalLog) SetCommitInterval(d time.Duration) (time.Duration, error) {
	if l.fail != nil {
		return 0, l.fail
	}
	prev := l.interval
	l.interval = d
	l.set = append(l.set, d)
	return prev, nil
}

func (l *intervalLog) RaiseCommitInterval(d time.Duration) (time.Duration, bool, error) {
	if l.fail != nil {
		return 0, false, l.fail
	}
	if l.interval >= d {
		return l.interval, false, nil
	}
	prev, err := l.SetCommitInterval(d)
	return prev, true, err
}

// TestRaiseCommitInterval checks what Run does to the log's commit
// interval around a snapshot: it raises a shorter one to CommitInterval
// and sets it back after; it leaves a longer or equal one as it was,
// never putting the shorter one in force even for a moment, and
// does nothing without CommitInterval, with a log that cannot set one, or
// when the log refuses it; it reports the interval in force during the
// snapshot, for its log line.
func TestRaiseCommitInterval(t *testing.T) {
	const us = time.Microsecond
	tests := []struct {
		name         string
		opt, own     time.Duration
		fail         error
		wantInterval time.Duration // during the snapshot
		wantReported time.Duration // raiseCommitInterval's answer: the interval in force
		wantSet      []time.Duration
	}{
		{"raised from none", 500 * us, 0, nil, 500 * us, 500 * us, []time.Duration{500 * us, 0}},
		{"raised from a shorter one", 500 * us, 200 * us, nil, 500 * us, 500 * us, []time.Duration{500 * us, 200 * us}},
		{"a longer one kept", 500 * us, time.Millisecond, nil, time.Millisecond, time.Millisecond, nil},
		{"an equal one kept", 500 * us, 500 * us, nil, 500 * us, 500 * us, nil},
		{"no CommitInterval", 0, 200 * us, nil, 200 * us, 200 * us, nil},
		{"neither", 0, 0, nil, 0, 0, nil},
		{"refused", 500 * us, 0, errors.New("out of range"), 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &intervalLog{interval: tt.own, fail: tt.fail}
			m := &Manager{log: l, opts: Options{CommitInterval: tt.opt, Logger: slog.New(slog.DiscardHandler)}}
			reported, restore := m.raiseCommitInterval()
			if reported != tt.wantReported || l.interval != tt.wantInterval {
				t.Errorf("during the snapshot: reported %v, the log's interval %v; want %v, %v", reported, l.interval, tt.wantReported, tt.wantInterval)
			}
			restore()
			if want := tt.own; tt.fail == nil && l.interval != want {
				t.Errorf("after the snapshot the log's interval is %v, want its own %v", l.interval, want)
			}
			if !slices.Equal(l.set, tt.wantSet) {
				t.Errorf("intervals set %v, want %v", l.set, tt.wantSet)
			}
		})
	}
	t.Run("a log that cannot set one", func(t *testing.T) {
		m := &Manager{log: &trimLog{}, opts: Options{CommitInterval: time.Millisecond}}
		if reported, restore := m.raiseCommitInterval(); reported != 0 {
			t.Errorf("reported %v on a log without a commit interval", reported)
		} else {
			restore()
		}
	})
}
