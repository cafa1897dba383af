package baseline

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestWriteSnapshots writes files every 20 ms for a while and checks that
// it reported each write's window, in order, and kept at most the newest
// two and a spare.
func TestWriteSnapshots(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var windows [][2]time.Time
	start := time.Now()
	n, err := WriteSnapshots(ctx, dir, 100_000, 20*time.Millisecond, 0, 0, func(s, e time.Time) {
		windows = append(windows, [2]time.Time{s, e})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 || len(windows) != n {
		t.Fatalf("%d writes, %d windows; want at least 2, one each", n, len(windows))
	}
	if first := windows[0][0].Sub(start); first < 10*time.Millisecond {
		t.Errorf("first write %v after the start; want half a period (10ms) or more", first)
	}
	for i, w := range windows {
		if w[1].Before(w[0]) || (i > 0 && w[0].Before(windows[i-1][1])) {
			t.Errorf("window %d: %v-%v after %v; want ordered", i, w[0], w[1], windows[max(i-1, 0)][1])
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) > 3 {
		t.Errorf("%d files left, %v; want at most 3", len(ents), err)
	}
	if _, err := WriteSnapshots(context.Background(), dir, 1, 0, 0, 0, nil); err == nil {
		t.Error("WriteSnapshots every 0s: no error")
	}
}
