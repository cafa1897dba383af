package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestThreadCountsWork: a busy loop on a locked thread shows up in the
// thread's CPU time, and a sleep does not (as TestProcessCountsWork, the
// loop runs until the CPU time shows, not for a span of wall time).
func TestThreadCountsWork(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, ok := Thread()
	if !ok {
		t.Fatal("no thread CPU time on linux")
	}
	time.Sleep(50 * time.Millisecond)
	slept, _ := Thread()
	if d := slept - before; d >= 25*time.Millisecond {
		t.Errorf("a 50 ms sleep added %v of thread CPU time, want far less", d)
	}
	const want, giveUp = 20 * time.Millisecond, time.Minute
	x := 0
	for start := time.Now(); time.Since(start) < giveUp; x++ {
		if x%1024 == 0 {
			if now, _ := Thread(); now-slept >= want {
				return
			}
		}
	}
	after, _ := Thread()
	t.Fatalf("a busy loop of %v (%d turns) added %v of thread CPU time, want %v", giveUp, x, after-slept, want)
}
