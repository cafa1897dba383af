package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name     string
		live     uint64
		headroom uint64
		base     int
		want     int
	}{
		{name: "small heap gets the headroom", live: 32 * mib, headroom: 512 * mib, base: 100, want: 1600},
		{name: "large heap keeps the base", live: 2048 * mib, headroom: 512 * mib, base: 100, want: 100},
		{name: "the crossing", live: 512 * mib, headroom: 512 * mib, base: 100, want: 100},
		{name: "a higher base wins", live: 256 * mib, headroom: 512 * mib, base: 400, want: 400},
		{name: "rounded up", live: 3 * 100 * mib, headroom: 512 * mib, base: 100, want: 171},
		{name: "an empty heap counts as the runtime's minimum", live: 0, headroom: 512 * mib, base: 100, want: 12800},
		{name: "below the minimum", live: mib, headroom: 512 * mib, base: 100, want: 12800},
		{name: "bounded", live: 0, headroom: math.MaxUint64 / 2, base: 100, want: math.MaxInt32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := gcPercentFor(tc.live, tc.headroom, tc.base); got != tc.want {
				t.Fatalf("gcPercentFor(%d, %d, %d) = %d, want %d", tc.live, tc.headroom, tc.base, got, tc.want)
			}
		})
	}
}

// gogc reads the collector's current target.
func gogc(t *testing.T) int {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// TestGCHeadroomFollowsTheLiveHeap checks that the target is set after
// each collection from the heap it left live, and set back by Stop.
func TestGCHeadroomFollowsTheLiveHeap(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	const headroom = 1 << 30
	h := startGCHeadroom(headroom)
	defer h.Stop()
	if got := gogc(t); got <= 100 {
		t.Fatalf("target %d right after the start, want above 100 for a heap far below 1 GiB", got)
	}
	// Hold a live heap of 64 MiB: the target must become about 1600.
	ballast := make([]*[1 << 20]byte, 64)
	for i := range ballast {
		ballast[i] = new([1 << 20]byte)
	}
	seen := h.cycles.Load()
	deadline := time.Now().Add(10 * time.Second)
	for h.cycles.Load() < seen+2 {
		if time.Now().After(deadline) {
			t.Fatalf("the target was not adjusted after two collections (%d cycles seen)", h.cycles.Load())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	got := gogc(t)
	// 1 GiB past a live heap of 64 MiB plus the test binary's own.
	if got < 800 || got > 1600 {
		t.Fatalf("target %d with about 64 MiB live, want 800-1600", got)
	}
	runtime.KeepAlive(ballast)
	h.Stop()
	if got := gogc(t); got != 100 {
		t.Fatalf("target %d after Stop, want the base 100", got)
	}
	// Stopped: a collection changes nothing any more.
	debug.SetGCPercent(150)
	runtime.GC()
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if got := gogc(t); got != 150 {
		t.Fatalf("target %d after a collection once stopped, want 150 left alone", got)
	}
}

func TestGCHeadroomOff(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	h := startGCHeadroom(0)
	h.Stop()
	if got := gogc(t); got != 100 {
		t.Fatalf("target %d with no headroom, want 100 untouched", got)
	}
	debug.SetGCPercent(-1)
	h = startGCHeadroom(512 << 20)
	h.Stop()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if v := s[0].Value.Uint64(); v <= math.MaxInt32 {
		t.Fatalf("target %d with the collector off, want it left off", v)
	}
}

// TestGCHeadroomAdjustAfterStop checks that a cleanup that runs its
// adjustment after Stop, as one already under way when Stop is called
// does, leaves Stop's base in place.
func TestGCHeadroomAdjustAfterStop(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	h := startGCHeadroomAt(1<<30, 100)
	h.Stop()
	if h.adjust() {
		t.Errorf("adjust after Stop reported a target set")
	}
	if got := gogc(t); got != 100 {
		t.Fatalf("target %d after an adjustment that followed Stop, want the base 100", got)
	}
}
