package bench

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marketd/core"
	"marketd/internal/fstype"
	"marketd/wal"
)

// stageCall is one call of BenchmarkPipelineStages, with the times (since
// the run's start) at which it passed each point of the path.
type stageCall struct {
	done     chan error // capacity 1
	seq      uint64
	sent     time.Duration // the caller put it in the actor's inbox
	received time.Duration // the actor took it
	appended time.Duration // the actor's Append returned
	woke     time.Duration // the caller ran again after its answer
}

// commitTimes keeps the log's commits, in seq order, as its observer.
type commitTimes struct {
	mu      sync.Mutex
	commits []wal.Commit
}

func (c *commitTimes) ObserveCommit(cm wal.Commit) {
	c.mu.Lock()
	c.commits = append(c.commits, cm)
	c.mu.Unlock()
}

// find returns the commit holding seq.
func (c *commitTimes) find(seq uint64) (wal.Commit, bool) {
	i := sort.Search(len(c.commits), func(i int) bool { return c.commits[i].Last >= seq })
	if i == len(c.commits) || c.commits[i].First > seq {
		return wal.Commit{}, false
	}
	return c.commits[i], true
}

// stageNames are the stages of a call through the pipeline, in order.
var stageNames = []string{
	"queue for the actor", // sent to received
	"actor (Next, encode, Append)",
	"wait for the writer", // appended to the commit's write
	"commit write",        // tidwall's WriteBatch
	"commit fsync",        // segment file and directory
	"release",             // fsync done to the caller running: acknowledgements and wake-up
	"total",
}

// BenchmarkPipelineStages runs BenchmarkPipelineFloor's shape (callers,
// 64 actors, the real log) and times each call at every stage of its way:
// in the actor's inbox, in the actor, waiting for the writer to take it,
// the commit's write and fsync, and from the fsync's end to the caller
// running again (the acknowledgements sent before its own and its
// goroutine's wake-up). It reports the median, p99, p99.9 and longest of
// each stage (logged with -v) and of the total as metrics. The segment
// size is a parameter so that its effect on the tail can be compared in
// one run.
func BenchmarkPipelineStages(b *testing.B) {
	for _, c := range []struct {
		name     string
		fsync    bool
		callers  int
		segBytes int
	}{
		{"fsync-on/segment=20MiB", true, 1024, 20 << 20},
		{"fsync-on/segment=4MiB", true, 1024, 4 << 20},
		{"fsync-on/segment=1MiB", true, 1024, 1 << 20},
		{"fsync-off/segment=20MiB", false, 64, 20 << 20},
		{"fsync-off/segment=4MiB", false, 64, 4 << 20},
		{"fsync-off/segment=1MiB", false, 64, 1 << 20},
	} {
		b.Run(c.name, func(b *testing.B) {
			run := startStageRun(b, wal.Options{NoFsync: !c.fsync, SegmentSizeBytes: c.segBytes}, floorActors)
			obs, start, inboxes, calls := run.obs, run.start, run.inboxes, run.calls
			b.ReportAllocs()
			b.ResetTimer()
			var next atomic.Int64
			var wg sync.WaitGroup
			for g := range c.callers {
				wg.Go(func() {
					for i := 0; ; i++ {
						n := next.Add(1)
						if n > int64(b.N) {
							return
						}
						if err := calls[n-1].roundTrip(inboxes[(g+i/2)%floorActors], start); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "trades/s")
			run.stop(b)
			stages := make([][]time.Duration, len(stageNames))
			obs.mu.Lock()
			defer obs.mu.Unlock()
			for i := range calls {
				call := &calls[i]
				for s, d := range append(call.stages(b, obs, start), call.woke-call.sent) {
					stages[s] = append(stages[s], d)
				}
			}
			logStages(b, fmt.Sprintf("%d calls, %d commits (%.0f records each)", b.N, len(obs.commits), float64(b.N)/float64(len(obs.commits))),
				stageNames, stages)
		})
	}
}

// roundTrip sends c to in and waits for its answer, noting when it was
// sent and when its caller ran again.
func (c *stageCall) roundTrip(in chan<- *stageCall, start time.Time) error {
	c.sent = time.Since(start)
	in <- c
	err := <-c.done
	c.woke = time.Since(start)
	return err
}

// stages returns c's time at each stage of stageNames but the total, from
// the commit of obs that holds it; obs.mu is held.
func (c *stageCall) stages(b *testing.B, obs *commitTimes, start time.Time) []time.Duration {
	cm, ok := obs.find(c.seq)
	if !ok {
		b.Fatalf("no commit holds seq %d", c.seq)
	}
	began := cm.Began.Sub(start)
	synced := began + cm.Write + cm.Fsync
	return []time.Duration{c.received - c.sent, c.appended - c.received,
		max(0, began-c.appended), cm.Write, cm.Fsync, c.woke - synced}
}

// stageRun is one run of a stage benchmark: the log, its actors and the
// calls, one per b.N.
type stageRun struct {
	obs     *commitTimes
	log     *wal.Log
	start   time.Time
	inboxes []chan *stageCall
	actors  *sync.WaitGroup
	calls   []stageCall
}

// startStageRun opens and starts a log with opts (quiet, observed) on the
// disk under test and starts n actors appending to it.
func startStageRun(b *testing.B, opts wal.Options, n int) *stageRun {
	r := &stageRun{obs: &commitTimes{}}
	opts.Logger, opts.Observer = quietLogger, r.obs
	var err error
	if r.log, err = wal.Open(fstype.DiskTempDir(b), opts); err != nil {
		b.Fatal(err)
	}
	r.log.Start()
	r.start = time.Now()
	r.inboxes, r.actors = startStageActors(r.log, r.start, n)
	r.calls = make([]stageCall, b.N)
	for i := range r.calls {
		r.calls[i].done = make(chan error, 1)
	}
	return r
}

// stop closes the actors' inboxes, waits for the actors (their last
// writes to the calls are then done) and closes the log.
func (r *stageRun) stop(b *testing.B) {
	for _, in := range r.inboxes {
		close(in)
	}
	r.actors.Wait()
	if err := r.log.Close(); err != nil {
		b.Fatal(err)
	}
}

// logStages logs, under header, the p50, p99, p99.9 and max of each
// stage's durations (sorted in place), and reports the total's as
// metrics.
func logStages(b *testing.B, header string, names []string, stages [][]time.Duration) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s\n%-30s %9s %9s %9s %9s\n", header, "stage (us)", "p50", "p99", "p99.9", "max")
	for s, ds := range stages {
		slices.Sort(ds)
		q := func(f float64) float64 { return float64(ds[int(f*float64(len(ds)-1))].Nanoseconds()) / 1000 }
		fmt.Fprintf(&sb, "%-30s %9.0f %9.0f %9.0f %9.0f\n", names[s], q(0.5), q(0.99), q(0.999), q(1))
		if names[s] == "total" {
			b.ReportMetric(q(0.99)/1000, "p99-ms")
			b.ReportMetric(q(0.999)/1000, "p99.9-ms")
			b.ReportMetric(q(1)/1000, "max-ms")
		}
	}
	b.Log("\n" + sb.String())
}

// startStageActors starts n actors as BenchmarkPipelineFloor's, which note
// when they took a call and when its Append returned.
func startStageActors(log *wal.Log, start time.Time, n int) ([]chan *stageCall, *sync.WaitGroup) {
	rec := sampleTradeRecord()
	inboxes := make([]chan *stageCall, n)
	actors := &sync.WaitGroup{}
	for i := range inboxes {
		in := make(chan *stageCall, core.DefaultInboxSize)
		inboxes[i] = in
		actors.Go(func() {
			for call := range in {
				call.received = time.Since(start)
				seq, err := log.Next()
				if err != nil {
					call.done <- err // the caller reports it
					continue
				}
				call.seq = seq
				log.Append(seq, rec, call.done)
				// After Append: the writer may have taken the record
				// already, which shows as no wait for the writer.
				call.appended = time.Since(start)
			}
		})
	}
	return inboxes, actors
}
