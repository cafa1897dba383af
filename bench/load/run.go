package load

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/valyala/fasthttp"
)

// lateAfter is how long after its due time an open-loop request may be
// sent and still count as sent on time: more than the timer and scheduling
// slack of an idle Go program, less than any latency worth reporting.
const lateAfter = time.Millisecond

// Options says how to send the load.
type Options struct {
	// Conns is the number of connections, each with its worker.
	Conns int
	// Duration is how long requests are sent.
	Duration time.Duration
	// Rate is the open loop's target in requests per second; 0 runs the
	// closed loop.
	Rate float64
	Mix  Mix
	Skew Skew
	// Seed seeds the workers' PCGs (worker w: Seed, w).
	Seed uint64
	// Progress receives a progress line every second; nil: none.
	Progress io.Writer
	// Measured, when set, is called as a run begins, and the function it
	// returns (if not nil) once the run's requests are all answered: to
	// trace or profile the run. Warmups run without it.
	Measured func(target string) (done func())
	// Pauses, when on, stops the target's server process on a schedule
	// during measured runs (Pauses); warm-ups run without them.
	Pauses Pauses
	// Settle, when set, is called before the run sends anything, and its
	// error ends the run: marketd-load's writes the machine's dirty pages
	// to disk (sync(2)), so that what was written before the run is not
	// written back during it (docs/PERFORMANCE.md, "Writeback that is not
	// the server's"). Warm-ups settle instead of the run after them
	// (Options.Warmup).
	Settle func() error
}

// Warmup returns the options of a warm-up of d before a run of o, and
// those of that run: the warm-up is not measured and shows no progress,
// and it settles instead of the run, so that the run follows its warm-up
// at once.
func (o Options) Warmup(d time.Duration) (warm, run Options) {
	warm, run = o, o
	warm.Duration, warm.Progress, warm.Measured, warm.Pauses = d, nil, nil, Pauses{}
	run.Settle = nil
	return warm, run
}

// Mode names the loop: "closed" or "open".
func (o Options) Mode() string {
	if o.Rate > 0 {
		return "open"
	}
	return "closed"
}

// Validate checks the options against the target's bots.
func (o Options) Validate(bots int) error {
	switch {
	case o.Conns < 1:
		return fmt.Errorf("load: %d connections", o.Conns)
	case bots < o.Conns:
		return fmt.Errorf("load: %d bots for %d connections: every connection needs a bot of its own", bots, o.Conns)
	case o.Duration <= 0:
		return fmt.Errorf("load: duration %v", o.Duration)
	case o.Rate < 0 || math.IsInf(o.Rate, 0) || math.IsNaN(o.Rate):
		return fmt.Errorf("load: rate %v", o.Rate)
	}
	return o.Pauses.Validate()
}

// Run sends the load to t for o.Duration (less if ctx is done first) and
// returns what it measured.
func Run(ctx context.Context, t *Target, o Options) (*Result, error) {
	if err := o.Validate(len(t.bots)); err != nil {
		return nil, err
	}
	if o.Pauses.On() && (t.ServerPid == 0 || t.ServerInProcess) {
		return nil, fmt.Errorf("%w: %s", errPausesHere, t.Name)
	}
	if o.Settle != nil {
		if err := o.Settle(); err != nil {
			return nil, fmt.Errorf("load: settle before %s: %w", t.Name, err)
		}
	}
	if o.Measured != nil {
		if done := o.Measured(t.Name); done != nil {
			defer done()
		}
	}
	col := newCollector(o.Conns)
	var stop atomic.Bool
	workers, recs := newWorkers(t, o, col, &stop)
	// The run's clock starts once its recorders are built and the last
	// run's garbage is collected: the recorders' histograms are about
	// 30 MB for 128 connections, and built after the start was taken
	// they, and the collection they set off, held the first sends of a
	// process's first measured run up to 100 ms late (docs/PERFORMANCE.md,
	// "The load generator's first second").
	runtime.GC()
	cpuBefore := sampleCPU(t.ServerPid)
	start := time.Now().Add(10 * time.Millisecond) // the workers are started by then
	end := start.Add(o.Duration)
	var ps *pauser
	if o.Pauses.On() {
		ps = startPauser(o.Pauses, t.ServerPid, start, end)
	}
	watchDone := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			stop.Store(true)
		case <-watchDone:
		}
	}()
	var wg sync.WaitGroup
	for w, wk := range workers {
		recs[w].start = start
		wg.Go(func() { wk.run(start, end) })
	}
	progressDone := make(chan struct{})
	if o.Progress != nil {
		go progress(o.Progress, t.Name, start, recs, progressDone)
	}
	wg.Wait()
	elapsed := time.Since(start)
	var paused pauseLog
	if ps != nil {
		paused = ps.finish()
	}
	cpuAfter := sampleCPU(t.ServerPid)
	close(watchDone)
	if o.Progress != nil {
		progressDone <- struct{}{}
	}
	close(col.in)
	seconds := col.finish()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load: run against %s: %w", t.Name, context.Cause(ctx))
	}
	if paused.err != nil {
		return nil, fmt.Errorf("load: run against %s: %w", t.Name, paused.err)
	}
	r := summarize(t.Name, o, start, elapsed, recs, seconds)
	r.CPU = cpuUse(cpuBefore, cpuAfter, r.Requests, t.ServerInProcess)
	if ps != nil {
		r.MarkPauses(paused.windows, paused.realtime)
	}
	return r, nil
}

// newWorkers builds a run's workers, one a connection, each with its own
// bots and recorder; the recorders' start is set once the run's is taken.
func newWorkers(t *Target, o Options, col *collector, stop *atomic.Bool) ([]*worker, []*recorder) {
	recs := make([]*recorder, o.Conns)
	workers := make([]*worker, o.Conns)
	reqs := newRequests(t.Client.Addr(), t.Markets)
	for w := range o.Conns {
		recs[w] = newRecorder(time.Time{}, col.in, col.free)
		var bots []*botState
		for i := w; i < len(t.bots); i += o.Conns {
			bots = append(bots, t.bots[i])
		}
		workers[w] = &worker{id: w, reqs: reqs, client: t, opts: o, bots: bots, rec: recs[w],
			rng: rand.New(rand.NewPCG(o.Seed, uint64(w))), stop: stop}
	}
	return workers, recs
}

// worker sends one connection's requests, for its own bots in turn.
type worker struct {
	id     int
	reqs   *requests
	client *Target
	opts   Options
	bots   []*botState
	rec    *recorder
	rng    *rand.Rand
	stop   *atomic.Bool
}

func (w *worker) run(start, end time.Time) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	time.Sleep(time.Until(start))
	if w.opts.Rate > 0 {
		w.openLoop(start, end, req, resp)
	} else {
		w.closedLoop(end, req, resp)
	}
	w.rec.flush()
}

func (w *worker) closedLoop(end time.Time, req *fasthttp.Request, resp *fasthttp.Response) {
	for n := 0; !w.stop.Load(); n++ {
		began := time.Now()
		if !began.Before(end) {
			return
		}
		w.send(n, req, resp, began)
	}
}

// openLoop sends request k of this worker at start + (id + k*Conns)/Rate:
// the workers' schedules interleave into one at Rate. Latency runs from
// that due time.
func (w *worker) openLoop(start, end time.Time, req *fasthttp.Request, resp *fasthttp.Response) {
	conns, rate := float64(w.opts.Conns), w.opts.Rate
	slots := rate * w.opts.Duration.Seconds() // requests due in the run, all workers
	mine := int64(math.Ceil((slots - float64(w.id)) / conns))
	for k := int64(0); k < mine; k++ {
		due := start.Add(time.Duration((float64(w.id) + float64(k)*conns) / rate * float64(time.Second)))
		now := time.Now()
		if now.Before(due) {
			time.Sleep(due.Sub(now))
			now = time.Now()
		}
		if w.stop.Load() || !now.Before(end) {
			w.rec.notSent += mine - k
			return
		}
		if lag := now.Sub(due); lag > lateAfter {
			w.rec.late++
			w.rec.maxLag = max(w.rec.maxLag, lag)
		}
		w.send(int(k), req, resp, due)
	}
}

// send sends the n-th request of this worker (for bot n modulo its bots)
// and records its latency from from.
func (w *worker) send(n int, req *fasthttp.Request, resp *fasthttp.Response, from time.Time) {
	b := w.bots[n%len(w.bots)]
	p := plan(w.rng, w.opts.Mix, w.opts.Skew, b)
	w.reqs.fill(req, b, p)
	err := w.client.Client.Do(req, resp)
	now := time.Now()
	status := statusTransportError
	if err == nil {
		status = resp.StatusCode()
		if status == fasthttp.StatusOK {
			apply(b, p)
		}
	} else {
		w.client.unanswered.Add(1)
	}
	w.rec.record(from, now.Sub(from), status, p.op)
}

// merged returns the workers' histograms merged into one.
func merged(recs []*recorder) *hdrhistogram.Histogram {
	h := newTotalHistogram()
	for _, r := range recs {
		h.Merge(r.total)
	}
	return h
}
