package load

import (
	"os"
	"testing"
	"time"
)

func TestStatCPU(t *testing.T) {
	for _, c := range []struct {
		name string
		line string
		want time.Duration
		ok   bool
	}{
		{"plain", "4242 (marketd) S 1 4242 4242 0 -1 4194560 1 0 0 0 150 25 0 0 20 0 9 0 100 0 0", 1750 * time.Millisecond, true},
		{"command with spaces and parentheses", "7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0", 70 * time.Millisecond, true},
		{"zero", "1 (x) S 0 0 0 0 0 0 0 0 0 0 0 0", 0, true},
		{"cut short", "1 (x) S 0 0 0 0 0 0 0 0 0 0 5", 0, false},
		{"no command", "1 x S 0 0 0 0 0 0 0 0 0 0 5 6", 0, false},
		{"not a number", "1 (x) S 0 0 0 0 0 0 0 0 0 0 5 y", 0, false},
		{"negative", "1 (x) S 0 0 0 0 0 0 0 0 0 0 -5 6", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := statCPU([]byte(c.line))
			if got != c.want || ok != c.ok {
				t.Errorf("statCPU(%q) = %v, %v; want %v, %v", c.line, got, ok, c.want, c.ok)
			}
		})
	}
}

// TestSampleCPU burns 300 ms of CPU on this goroutine (by getrusage; the
// machine may be busy, so not by the clock) and checks that /proc's
// reading of a process by its id, this one again, sees it too.
func TestSampleCPU(t *testing.T) {
	before := sampleCPU(os.Getpid())
	if !before.serverOK {
		t.Fatal("cannot read this process's /proc/PID/stat")
	}
	x := uint64(1)
	for began := time.Now(); sampleCPU(0).self-before.self < 300*time.Millisecond; {
		if time.Since(began) > time.Minute {
			t.Fatal("300 ms of CPU not used in a minute")
		}
		for range 10_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	after := sampleCPU(os.Getpid())
	u := cpuUse(before, after, 1000, false)
	// 300 ms of CPU over 1,000 requests is 300 us each; /proc counts in
	// 10 ms ticks, and the test's other goroutines may add some.
	if u.LoadUs < 250 || u.ServerUs == nil || *u.ServerUs < 250 {
		t.Errorf("after 300 ms of CPU (x=%d): %+v; want both at least 250 us a request", x, u)
	}
	if cpuUse(before, after, 0, false) != nil {
		t.Error("cpuUse of no requests is not nil")
	}
}
