package load

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

const (
	// lowestMicros and highestMicros bound what a histogram records, in
	// microseconds: 1 us to 5 minutes, beyond any client timeout; a larger
	// value is recorded as highestMicros.
	lowestMicros  = 1
	highestMicros = int64(5 * time.Minute / time.Microsecond)
	// totalFigures keeps a run's histogram to 3 significant digits
	// (0.1%); perSecondFigures keeps the time series' to 2 (1%), which is
	// a tenth of the memory for as many histograms as seconds.
	totalFigures     = 3
	perSecondFigures = 2
	// maxFreeSeconds bounds the per-second histograms kept for reuse.
	maxFreeSeconds = 256
	// statusTransportError stands for a request that got no answer
	// (refused, reset, timed out) in the counts by status.
	statusTransportError = 0
	// slowestKept is how many of its slowest requests each worker keeps,
	// and a run reports: enough to find the stalls in an execution trace.
	slowestKept = 10
)

func newTotalHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(lowestMicros, highestMicros, totalFigures)
}

func newSecondHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(lowestMicros, highestMicros, perSecondFigures)
}

// secondSample is one worker's figures for one second of a run.
type secondSample struct {
	second   int
	h        *hdrhistogram.Histogram
	ok, errs int64
	// errors counts the requests not answered 2xx by status.
	errors map[int]int64
}

// recorder is one worker's record of a run. Only its worker writes it
// until the run ends, but for the atomic counters that the progress line
// reads.
type recorder struct {
	start    time.Time
	total    *hdrhistogram.Histogram
	byStatus map[int]int64

	second   int
	cur      *hdrhistogram.Histogram
	ok, errs int64 // of the current second
	errors   map[int]int64
	out      chan<- secondSample
	free     <-chan *hdrhistogram.Histogram

	late    int64
	notSent int64
	maxLag  time.Duration
	slowest []slowRequest // at most slowestKept, in no order
	minSlow time.Duration // the least latency in slowest

	done, failed atomic.Int64
}

func newRecorder(start time.Time, out chan<- secondSample, free <-chan *hdrhistogram.Histogram) *recorder {
	return &recorder{start: start, total: newTotalHistogram(), byStatus: make(map[int]int64),
		out: out, free: free, cur: newSecondHistogram()}
}

// slowRequest is one of a worker's slowest requests.
type slowRequest struct {
	from    time.Time
	latency time.Duration
	status  int
	op      Op
}

// keepIfSlow keeps the request among the worker's slowest.
func (r *recorder) keepIfSlow(s slowRequest) {
	if len(r.slowest) < slowestKept {
		r.slowest = append(r.slowest, s)
		return
	}
	least := 0
	for i := range r.slowest {
		if r.slowest[i].latency < r.slowest[least].latency {
			least = i
		}
	}
	if s.latency > r.slowest[least].latency {
		r.slowest[least] = s
	}
}

// record counts one request of op (status 0: no answer), sent (closed loop)
// or due (open loop) at from, that took latency. The time series counts it
// in the second of from, so that every second of the run is whole: the last
// one holds the requests sent in it, however late their answers.
func (r *recorder) record(from time.Time, latency time.Duration, status int, op Op) {
	if s := int(from.Sub(r.start) / time.Second); s != r.second {
		r.flush()
		r.second = s
	}
	us := min(max(int64(latency/time.Microsecond), lowestMicros), highestMicros)
	// Within the bounds by construction: RecordValue cannot fail.
	_ = r.total.RecordValue(us)
	_ = r.cur.RecordValue(us)
	r.byStatus[status]++
	r.done.Add(1)
	if len(r.slowest) < slowestKept || latency > r.minSlow {
		r.keepIfSlow(slowRequest{from: from, latency: latency, status: status, op: op})
		r.minSlow = slices.MinFunc(r.slowest, func(a, b slowRequest) int { return cmp.Compare(a.latency, b.latency) }).latency
	}
	if status >= 200 && status < 300 {
		r.ok++
	} else {
		r.errs++
		if r.errors == nil {
			r.errors = make(map[int]int64)
		}
		r.errors[status]++
		r.failed.Add(1)
	}
}

// flush hands the current second to the collector and starts a new one.
func (r *recorder) flush() {
	if r.cur.TotalCount() == 0 {
		return
	}
	r.out <- secondSample{second: r.second, h: r.cur, ok: r.ok, errs: r.errs, errors: r.errors}
	r.ok, r.errs, r.errors = 0, 0, nil
	select {
	case h := <-r.free:
		h.Reset()
		r.cur = h
	default:
		r.cur = newSecondHistogram()
	}
}

// collector merges the workers' seconds into the run's time series. It
// runs on its own goroutine until its input is closed.
type collector struct {
	in      chan secondSample
	free    chan *hdrhistogram.Histogram
	seconds []secondTotal
	done    chan struct{}
}

type secondTotal struct {
	h        *hdrhistogram.Histogram
	ok, errs int64
	errors   map[string]int64
}

func newCollector(workers int) *collector {
	c := &collector{in: make(chan secondSample, 4*workers), free: make(chan *hdrhistogram.Histogram, maxFreeSeconds),
		done: make(chan struct{})}
	go c.run()
	return c
}

func (c *collector) run() {
	defer close(c.done)
	for s := range c.in {
		for len(c.seconds) <= s.second {
			c.seconds = append(c.seconds, secondTotal{h: newSecondHistogram()})
		}
		t := &c.seconds[s.second]
		t.h.Merge(s.h)
		t.ok += s.ok
		t.errs += s.errs
		for status, n := range s.errors {
			if t.errors == nil {
				t.errors = make(map[string]int64)
			}
			t.errors[statusName(status)] += n
		}
		select {
		case c.free <- s.h:
		default:
		}
	}
}

// finish waits for the collector's input to be drained (the caller closed
// it) and returns the series.
func (c *collector) finish() []secondTotal {
	<-c.done
	return c.seconds
}
