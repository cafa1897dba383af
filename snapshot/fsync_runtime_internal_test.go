package snapshot

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"marketd/core"
)

// syncerLog is a trimLog whose writer can be told to fsync through the
// runtime; it counts the calls not yet restored.
type syncerLog struct {
	trimLog
	calls, active int
}

func (l *syncerLog) FsyncThroughRuntime() func() {
	l.calls++
	l.active++
	return func() { l.active-- }
}

// TestTakeFsyncsThroughRuntime checks that a snapshot is written with the
// log's writer fsyncing through the runtime (wal.Log.FsyncThroughRuntime),
// from before the write begins until after it is done, and that this is
// undone after it: the manager reads its clock as the write starts and
// as it ends, and each reading must find the call in force.
func TestTakeFsyncsThroughRuntime(t *testing.T) {
	l := &syncerLog{}
	var seen []int
	now := func() time.Time {
		seen = append(seen, l.active)
		return time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	}
	m := NewManager(core.NewState(), l, Options{Dir: t.TempDir(), Now: now, Logger: slog.New(slog.DiscardHandler)}, nil)
	if _, err := m.Take(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l.calls != 1 || l.active != 0 {
		t.Errorf("after the snapshot: %d calls, %d not restored; want 1, 0", l.calls, l.active)
	}
	if len(seen) < 2 {
		t.Fatalf("the clock was read %d times around the write, want at least 2", len(seen))
	}
	for i, a := range seen {
		if a != 1 {
			t.Errorf("clock reading %d during the snapshot: %d calls in force, want 1", i, a)
		}
	}
}
