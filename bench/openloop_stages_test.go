package bench

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"marketd/wal"
)

// Open-loop shape of the 8-market row (docs/PERFORMANCE.md, "The open
// loop's tail"): openLoopCallers callers, as marketd-load's connections,
// each sending its calls at their scheduled times and waiting for each,
// spread over openLoopActors actors that append to one log with fsync on.
const (
	openLoopCallers = 128
	openLoopActors  = 8
	openLoopRate    = 21666 // calls a second, all callers together
)

// BenchmarkOpenLoopStages runs the 8-market open loop without HTTP: b.N
// calls scheduled at openLoopRate a second (-benchtime 650000x is 30 s),
// call i to actor i mod 8, through the real log (fsync on, 1 MiB
// segments). Each call's latency counts from its scheduled time, so that a
// stall delays every call scheduled during it, as in marketd-load's open
// loop; it is taken apart as BenchmarkPipelineStages' stages, with the
// lateness of the send ("late send") first. Logged with -v: every stage's
// p50, p99, p99.9 and max; reported: the total's.
func BenchmarkOpenLoopStages(b *testing.B) {
	run := startStageRun(b, wal.Options{}, openLoopActors)
	obs, start, inboxes, calls := run.obs, run.start, run.inboxes, run.calls
	scheduled := func(i int) time.Duration { return time.Duration(float64(i) / openLoopRate * float64(time.Second)) }
	b.ReportAllocs()
	b.ResetTimer()
	begin := time.Since(start)
	var wg sync.WaitGroup
	for g := range openLoopCallers {
		wg.Go(func() {
			for i := g; i < b.N; i += openLoopCallers {
				at := begin + scheduled(i)
				if d := at - time.Since(start); d > 0 {
					time.Sleep(d)
				}
				if err := calls[i].roundTrip(inboxes[i%openLoopActors], start); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	run.stop(b)
	names := append([]string{"late send"}, stageNames...)
	stages := make([][]time.Duration, len(names))
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for i := range calls {
		call := &calls[i]
		at := begin + scheduled(i)
		ds := append([]time.Duration{call.sent - at}, call.stages(b, obs, start)...)
		for s, d := range append(ds, call.woke-at) {
			stages[s] = append(stages[s], d)
		}
	}
	logStages(b, fmt.Sprintf("%d calls at %d/s, %d commits (%.1f records each)", b.N, openLoopRate, len(obs.commits), float64(b.N)/float64(len(obs.commits))),
		names, stages)
}
