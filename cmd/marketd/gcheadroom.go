package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// DefaultGCHeadroomMiB is -gc-headroom-mib's default: the least the heap
// may grow past what the last collection left live before the next one.
// With 8 markets and 128 bots trading at 12,000/s the live heap grew to
// 110-150 MB in a minute and the server allocated about 2 KB a request: at
// the usual target (GOGC 100) a collection came every second or so (49 in
// the minute), and each one's mark phase (10-200 ms on 2 cores) made the
// requests it overlapped four to five times slower (docs/PERFORMANCE.md,
// "The open loop's tail").
const DefaultGCHeadroomMiB = 512

// maxGCHeadroomMiB bounds -gc-headroom-mib: 1 TiB.
const maxGCHeadroomMiB = 1 << 20

// runtimeHeapMinimum is the Go runtime's least heap target at GOGC 100 (4
// MiB, runtime/mgcpacer.go), which it scales by the target: below it a live
// heap is counted as this much, or the target that gives a tiny heap its
// headroom would make the minimum far larger than the headroom.
const runtimeHeapMinimum = 4 << 20

// gcHeadroom keeps the collector's next cycle at least headroom bytes past
// the live heap: after every cycle it sets the target (debug.SetGCPercent)
// to max(base, 100 * headroom / live). A small heap then grows by the
// headroom before the collector runs again, and a large one by base percent
// as usual, so memory stays bounded by the live heap plus the larger of the
// two. A memory limit (GOMEMLIMIT) still caps the heap below it.
type gcHeadroom struct {
	base     int    // the target when the live heap is large: GOGC's
	headroom uint64 // bytes
	sample   []metrics.Sample
	cycles   atomic.Uint64 // cycles seen, for the tests

	// mu makes a cleanup's check of stopped and its SetGCPercent one step
	// against Stop: a cleanup already past the check must not set its
	// target after Stop has set base back.
	mu      sync.Mutex
	stopped bool
}

// startGCHeadroom starts keeping headroom bytes, with the collector's
// current target (GOGC) as base. It does nothing when headroom is 0 or the
// collector is off. Stop ends it.
func startGCHeadroom(headroom uint64) *gcHeadroom {
	cur := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(cur)
	base := 100
	if cur[0].Value.Kind() == metrics.KindUint64 {
		base = -1 // GOGC=off reads as the uint64 of -1
		if v := cur[0].Value.Uint64(); v <= math.MaxInt32 {
			base = int(v)
		}
	}
	return startGCHeadroomAt(headroom, base)
}

// startGCHeadroomAt is startGCHeadroom with the base target given; base < 0
// (the collector off) does nothing.
func startGCHeadroomAt(headroom uint64, base int) *gcHeadroom {
	h := &gcHeadroom{base: base, headroom: headroom,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	if headroom == 0 || base < 0 {
		h.stopped = true
		return h
	}
	h.adjust()
	h.arm()
	return h
}

// Stop stops adjusting the target and sets it back to base.
func (h *gcHeadroom) Stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	h.stopped = true
	debug.SetGCPercent(h.base)
}

// arm registers a cleanup on a new unreachable object: it runs after the
// next cycle that finds the object dead, that is after every cycle, and
// arms again.
func (h *gcHeadroom) arm() {
	sentinel := new([64]byte) // not tiny: a tiny object may share a block that stays live
	runtime.AddCleanup(sentinel, func(h *gcHeadroom) {
		if !h.adjust() {
			return
		}
		h.cycles.Add(1)
		h.arm()
	}, h)
}

// adjust sets the target for the live heap the last cycle left, unless
// Stop came first; it reports whether it did.
func (h *gcHeadroom) adjust() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return false
	}
	metrics.Read(h.sample)
	var live uint64
	if h.sample[0].Value.Kind() == metrics.KindUint64 {
		live = h.sample[0].Value.Uint64()
	}
	debug.SetGCPercent(gcPercentFor(live, h.headroom, h.base))
	return true
}

// gcPercentFor returns the target that lets a live heap of live bytes grow
// by at least headroom bytes, and by at least base percent.
func gcPercentFor(live, headroom uint64, base int) int {
	p := math.Ceil(float64(headroom) * 100 / float64(max(live, runtimeHeapMinimum)))
	if p > math.MaxInt32 {
		p = math.MaxInt32
	}
	return max(base, int(p))
}
