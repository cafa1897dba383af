package bench

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marketd/core"
	"marketd/internal/cputime"
	"marketd/internal/fstype"
	"marketd/wal"
	"marketd/wal/record"
)

// floorActors is the number of actor goroutines of BenchmarkPipelineFloor,
// as many as the markets of core's trade benchmarks.
const floorActors = 64

// floorCall is one caller's request to an actor.
type floorCall struct {
	done  chan error // capacity 1
	frame []byte     // the record's frame, for the bare writer
}

// BenchmarkPipelineFloor runs the shape of core's trade path with no
// trading in it: callers hand a request to an actor goroutine over a
// channel and wait for the answer; the actor reserves a seq, appends a
// fixed trade record to a real log (which encodes it, on the actor's
// goroutine) and goes on, and the log's writer acknowledges the record to
// the caller after writing it. No account, no market, no pricing, no
// locks. Whatever core's actors do on top, they cannot be faster than
// this, so it bounds BenchmarkTradeFsyncOff (64 goroutines) and
// BenchmarkTradeDurable (1,024) of package core on this machine:
//
//   - no-log: the actor answers at once, the two hand-overs alone;
//   - fsync-off: through the log with fsync off (64 callers);
//   - fsync-on: through the log with fsync on (1,024 callers);
//   - bare-fsync-off and bare-fsync-on: the same callers and actors over
//     the least a log must do (bareWriter): the actor encodes the same
//     frame and hands it to one writer goroutine, which writes each batch
//     it gathers with one write(2) to a plain file, fsyncs it (bare-fsync-on)
//     and answers the callers itself. What fsync-off and fsync-on spend
//     beyond these two is marketd's log (docs/PERFORMANCE.md, "The log
//     against a bare write").
func BenchmarkPipelineFloor(b *testing.B) {
	for _, c := range []struct {
		name    string
		log     bool
		bare    bool
		fsync   bool
		callers int
	}{
		{"no-log", false, false, false, 64},
		{"fsync-off", true, false, false, 64},
		{"fsync-on", true, false, true, 1024},
		{"bare-fsync-off", false, true, false, 64},
		{"bare-fsync-on", false, true, true, 1024},
	} {
		b.Run(c.name, func(b *testing.B) {
			var log *wal.Log
			if c.log {
				dir := fstype.DiskTempDir(b)
				var err error
				if log, err = wal.Open(dir, wal.Options{NoFsync: !c.fsync, Logger: quietLogger}); err != nil {
					b.Fatal(err)
				}
				log.Start()
			}
			var bare *bareWriter
			if c.bare {
				bare = startBareWriter(b, c.fsync)
			}
			inboxes := startFloorActors(b, log, bare)
			b.ReportAllocs()
			cpu0, hasCPU := cputime.Process()
			b.ResetTimer()
			var next atomic.Int64
			var wg sync.WaitGroup
			for g := range c.callers {
				wg.Go(func() {
					call := &floorCall{done: make(chan error, 1)}
					for i := 0; next.Add(1) <= int64(b.N); i++ {
						inboxes[(g+i/2)%floorActors] <- call
						if err := <-call.done; err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			reportTradeRate(b, cpu0, hasCPU)
			for _, in := range inboxes {
				close(in)
			}
			if bare != nil {
				commits, writing, fsync := bare.stop()
				reportFloorCommits(b, b.N, commits, writing, fsync)
			}
			if log != nil {
				st := log.Stats()
				reportFloorCommits(b, int(st.Records), int(st.Batches), st.WriteTotal, st.FsyncTotal)
				if err := log.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// reportTradeRate reports the trades a second of a stopped benchmark, b.N
// of them, and, when cpu0 (the process's CPU time at the start) was read,
// the CPU time per trade and how many cores were busy on average.
func reportTradeRate(b *testing.B, cpu0 time.Duration, hasCPU bool) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "trades/s")
	if cpu1, ok := cputime.Process(); hasCPU && ok {
		cpu := cpu1 - cpu0
		b.ReportMetric(float64(cpu.Nanoseconds())/1000/float64(b.N), "cpu-us/trade")
		b.ReportMetric(cpu.Seconds()/b.Elapsed().Seconds(), "cores-used")
	}
}

// reportFloorCommits reports the records per commit and the time per commit in
// its write (tidwall's WriteBatch, with a new segment's fsync and creation)
// and in its fsyncs (the segment's, and the directory's after a new one).
func reportFloorCommits(b *testing.B, records, commits int, writing, fsync time.Duration) {
	commits = max(commits, 1)
	b.ReportMetric(float64(records)/float64(commits), "records/commit")
	b.ReportMetric(float64(writing.Microseconds())/float64(commits), "write-us/commit")
	b.ReportMetric(float64(fsync.Microseconds())/float64(commits), "fsync-us/commit")
}

// startFloorActors starts the actors of BenchmarkPipelineFloor and returns
// their inboxes; each actor exits when its inbox is closed. With a nil
// log and a nil bare writer an actor answers at once.
func startFloorActors(b *testing.B, log *wal.Log, bare *bareWriter) []chan *floorCall {
	rec := sampleTradeRecord()
	inboxes := make([]chan *floorCall, floorActors)
	for i := range inboxes {
		in := make(chan *floorCall, core.DefaultInboxSize)
		inboxes[i] = in
		go func() {
			for call := range in {
				if bare != nil {
					call.frame = record.AppendFramed(call.frame[:0], bare.seq.Add(1), rec)
					bare.calls <- call
					continue
				}
				if log == nil {
					call.done <- nil
					continue
				}
				seq, err := log.Next()
				if err != nil {
					call.done <- err // the caller reports it
					continue
				}
				log.Append(seq, rec, call.done)
			}
		}()
	}
	return inboxes
}
