//go:build unix

package cputime

import (
	"testing"
	"time"
)

// TestProcessCountsWork: a busy loop shows up in the process's CPU time.
// The loop runs until 20 ms of CPU time show, not for a span of wall time:
// on a machine shared with other work a 50 ms loop got as little as 8 ms
// of CPU. The wall-clock bound only stops a Process that never advances.
func TestProcessCountsWork(t *testing.T) {
	before, ok := Process()
	if !ok {
		t.Fatal("no CPU time on a unix system")
	}
	const want, giveUp = 20 * time.Millisecond, time.Minute
	x := 0
	for start := time.Now(); time.Since(start) < giveUp; x++ {
		if x%1024 == 0 {
			if now, _ := Process(); now-before >= want {
				return
			}
		}
	}
	after, _ := Process()
	t.Fatalf("a busy loop of %v (%d turns) added %v of CPU time, want %v", giveUp, x, after-before, want)
}
