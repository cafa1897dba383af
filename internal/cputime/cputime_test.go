//go:build unix

package cputime

import (
	"testing"
	"time"
)

// TestProcessCountsWork: a busy loop shows up in the process's CPU time.
func TestProcessCountsWork(t *testing.T) {
	before, ok := Process()
	if !ok {
		t.Fatal("no CPU time on a unix system")
	}
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	after, _ := Process()
	if d := after - before; d < 20*time.Millisecond {
		t.Fatalf("a 50 ms busy loop (%d turns) added %v of CPU time", x, d)
	}
}
