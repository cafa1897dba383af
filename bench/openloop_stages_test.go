package bench

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"marketd/internal/fstype"
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
	obs := &commitTimes{}
	log, err := wal.Open(fstype.DiskTempDir(b), wal.Options{Logger: quietLogger, Observer: obs})
	if err != nil {
		b.Fatal(err)
	}
	log.Start()
	start := time.Now()
	inboxes, actors := startStageActors(log, start, openLoopActors)
	calls := make([]stageCall, b.N)
	for i := range calls {
		calls[i].done = make(chan error, 1)
	}
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
				call := &calls[i]
				call.sent = time.Since(start)
				inboxes[i%openLoopActors] <- call
				if err := <-call.done; err != nil {
					b.Error(err)
					return
				}
				call.woke = time.Since(start)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	for _, in := range inboxes {
		close(in)
	}
	actors.Wait()
	if err := log.Close(); err != nil {
		b.Fatal(err)
	}
	names := append([]string{"late send"}, stageNames...)
	stages := make([][]time.Duration, len(names))
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for i := range calls {
		call := &calls[i]
		cm, ok := obs.find(call.seq)
		if !ok {
			b.Fatalf("no commit holds seq %d", call.seq)
		}
		at := begin + scheduled(i)
		began := cm.Began.Sub(start)
		synced := began + cm.Write + cm.Fsync
		for s, d := range []time.Duration{call.sent - at, call.received - call.sent, call.appended - call.received,
			max(0, began-call.appended), cm.Write, cm.Fsync, call.woke - synced, call.woke - at} {
			stages[s] = append(stages[s], d)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d calls at %d/s, %d commits (%.1f records each)\n%-30s %9s %9s %9s %9s\n",
		b.N, openLoopRate, len(obs.commits), float64(b.N)/float64(len(obs.commits)), "stage (us)", "p50", "p99", "p99.9", "max")
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
