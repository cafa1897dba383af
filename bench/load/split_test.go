package load

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// splitRun returns a run of 6 seconds from start whose requests took 1 ms,
// but 40 ms in the seconds slow.
func splitRun(t *testing.T, start time.Time, slow ...int) *Result {
	t.Helper()
	r := &Result{Target: "marketd", Seconds: 6, start: start}
	for i := range 6 {
		h := newSecondHistogram()
		us := int64(1000)
		if slices.Contains(slow, i) {
			us = 40_000
		}
		if err := h.RecordValue(us); err != nil {
			t.Fatal(err)
		}
		r.Series = append(r.Series, Second{T: i, LatencyP: latencyOf(h)})
		r.secondHists = append(r.secondHists, h)
	}
	return r
}

// TestMarkCollections marks the seconds that the windows of the server's
// collections touch and splits the latency between them and the others.
func TestMarkCollections(t *testing.T) {
	start := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	for _, c := range []struct {
		name    string
		windows []Window
		spans   []Span
		marked  []int
		// duringMax and outsideMax are the split's maxima in ms; 0: nil.
		duringMax, outsideMax float64
	}{
		{name: "none"},
		{name: "outside the run", windows: []Window{{Start: at(-10_000), End: at(-9_750), Ended: 1}, {Start: at(20_000), End: at(20_250), Ended: 1}}},
		{name: "seconds 2 and 3", windows: []Window{{Start: at(2800), End: at(3050), Ended: 3}},
			spans: []Span{{StartS: 2.8, EndS: 3.05, Ended: 3}}, marked: []int{2, 3}, duringMax: 40, outsideMax: 1},
		{name: "one before the run, one in it", windows: []Window{{Start: at(-250), End: at(10), Ended: 1}, {Start: at(2100), End: at(2350), Ended: 1}},
			spans:  []Span{{StartS: -0.25, EndS: 0.01, Ended: 1}, {StartS: 2.1, EndS: 2.35, Ended: 1}},
			marked: []int{0, 2}, duringMax: 40, outsideMax: 40},
		{name: "every second", windows: []Window{{Start: at(-100), End: at(6100), Ended: 9}},
			spans: []Span{{StartS: -0.1, EndS: 6.1, Ended: 9}}, marked: []int{0, 1, 2, 3, 4, 5}, duringMax: 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := splitRun(t, start, 2, 3)
			r.Series[4].Snapshot = true
			r.MarkCollections(c.windows)
			var marked []int
			for _, s := range r.Series {
				if s.Collection {
					marked = append(marked, s.T)
				}
			}
			if !slices.Equal(marked, c.marked) || len(r.Collections) != len(c.spans) {
				t.Fatalf("windows %+v: spans %+v, seconds marked %v; want %+v, %v", c.windows, r.Collections, marked, c.spans, c.marked)
			}
			for i, sp := range r.Collections {
				w := c.spans[i]
				if sp.Ended != w.Ended || !near(sp.StartS, w.StartS) || !near(sp.EndS, w.EndS) {
					t.Fatalf("windows %+v: spans %+v, want %+v", c.windows, r.Collections, c.spans)
				}
			}
			if !splitMax(r.DuringCollections, c.duringMax) || !splitMax(r.OutsideCollections, c.outsideMax) {
				t.Fatalf("windows %+v: during %+v, outside %+v; want maxima %v and %v ms (0: none)",
					c.windows, r.DuringCollections, r.OutsideCollections, c.duringMax, c.outsideMax)
			}
			if !r.Series[4].Snapshot || r.Snapshots != nil {
				t.Fatalf("windows %+v: the snapshot marks changed: second 4 %+v, snapshots %+v", c.windows, r.Series[4], r.Snapshots)
			}
		})
	}
}

// near says whether two seconds are within a microsecond.
func near(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }

// splitMax says whether l is nil for a want of 0, or has a maximum within
// the per-second histograms' 1% of want.
func splitMax(l *Latency, want float64) bool {
	if want == 0 {
		return l == nil
	}
	return l != nil && l.Max >= want*0.99 && l.Max <= want*1.01
}

// TestWriteCollections writes the collections' lines of a run's report.
func TestWriteCollections(t *testing.T) {
	start := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		windows []Window
		want    []string // lines, in order; none: nothing written
	}{
		{name: "none"},
		{name: "two windows", windows: []Window{
			{Start: start.Add(1200 * time.Millisecond), End: start.Add(1420 * time.Millisecond), Ended: 1},
			{Start: start.Add(2800 * time.Millisecond), End: start.Add(3020 * time.Millisecond), Ended: 3},
		}, want: []string{
			"marketd: 4 server garbage collections, ended in 1.2-1.4 s 2.8-3.0 s (3) of the run (3 of its 6 seconds)",
			"  seconds with a collection: p50 40.",
			"  other seconds:             p50 1.0",
		}},
		{name: "one collection", windows: []Window{
			{Start: start.Add(1200 * time.Millisecond), End: start.Add(1420 * time.Millisecond), Ended: 1},
		}, want: []string{
			"marketd: 1 server garbage collection, ended in 1.2-1.4 s of the run (1 of its 6 seconds)",
			"  seconds with a collection: p50 1.0",
			"  other seconds:             p50 1.0",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := splitRun(t, start, 2, 3)
			r.MarkCollections(c.windows)
			var b strings.Builder
			writeCollections(&b, r)
			got := b.String()
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if len(c.want) == 0 {
				if got != "" {
					t.Fatalf("windows %+v: wrote %q, want nothing", c.windows, got)
				}
				return
			}
			if len(lines) != len(c.want) {
				t.Fatalf("windows %+v: wrote %q, want lines beginning %q", c.windows, got, c.want)
			}
			for i, w := range c.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Fatalf("windows %+v: line %d is %q, want it to begin %q", c.windows, i, lines[i], w)
				}
			}
		})
	}
}
