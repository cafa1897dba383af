package bench

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"marketd/internal/cputime"
)

// overheadPairs is the number of alternating pairs of runs, metrics on and
// off, of BenchmarkMetricsOverhead.
const overheadPairs = 30

// BenchmarkMetricsOverhead measures the instrumentation's cost on the trade
// path (docs/PERFORMANCE.md, "Instrumentation"): two trade servers, durable,
// 8 markets, 64 connections, one with every metric on and one with them
// off, driven in overheadPairs alternating pairs (on then off, then off then
// on, so that neither always runs second), each run the same number of
// requests (-benchtime Nx). Each run reports req/s and cpu-us/op; the
// summary logs, over the pairs, the median and range of the difference
// in throughput and in CPU per trade, on against off.
//
// A Prometheus scrape every 15 s costs a collection of every series, once:
// the benchmark gathers the registry once a second meanwhile, so that this
// cost is inside the figure too.
func BenchmarkMetricsOverhead(b *testing.B) {
	reg := prometheus.NewRegistry()
	servers := map[bool]*tradeServer{true: startTradeWith(b, true, reg), false: startTrade(b, true)}
	loads := map[bool][]workload{true: servers[true].setup(b, 8), false: servers[false].setup(b, 8)}
	stop := make(chan struct{})
	gathered := make(chan error, 1)
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				gathered <- nil
				return
			case <-t.C:
				if _, err := reg.Gather(); err != nil {
					gathered <- err
					return
				}
			}
		}
	}()
	defer func() {
		close(stop)
		if err := <-gathered; err != nil {
			b.Errorf("gather: %v", err)
		}
	}()

	type pair struct{ on, off result }
	pairs := make([]pair, overheadPairs)
	for i := range pairs {
		order := []bool{true, false}
		if i%2 == 1 {
			order = []bool{false, true}
		}
		for _, on := range order {
			name := "off"
			if on {
				name = "on"
			}
			b.Run(fmt.Sprintf("pair-%02d/metrics-%s", i, name), func(b *testing.B) {
				b.ReportAllocs()
				r := drive(b, servers[on].addr, tradePath, loads[on])
				report(b, r)
				if on {
					pairs[i].on = r
				} else {
					pairs[i].off = r
				}
			})
		}
	}

	// Differences of on against off, in percent: negative throughput and
	// positive CPU are the instrumentation's cost.
	var tput, cpu, cpuOn, cpuOff []float64
	for _, p := range pairs {
		tput = append(tput, 100*(p.on.perSecond()/p.off.perSecond()-1))
		if p.on.hasCPU && p.off.hasCPU {
			on, off := cpuPerOp(p.on), cpuPerOp(p.off)
			cpu = append(cpu, 100*(on/off-1))
			cpuOn, cpuOff = append(cpuOn, on), append(cpuOff, off)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "metrics on vs off, %d pairs of %d requests each:\n", len(pairs), pairs[0].on.requests)
	fmt.Fprintf(&sb, "  throughput difference: median %+.2f%%, range %+.2f%% to %+.2f%%\n", median(tput), slices.Min(tput), slices.Max(tput))
	if len(cpu) > 0 {
		fmt.Fprintf(&sb, "  CPU per trade difference: median %+.2f%%, range %+.2f%% to %+.2f%%\n", median(cpu), slices.Min(cpu), slices.Max(cpu))
		fmt.Fprintf(&sb, "  CPU per trade: on median %.1f us (%.1f-%.1f), off median %.1f us (%.1f-%.1f)\n",
			median(cpuOn), slices.Min(cpuOn), slices.Max(cpuOn), median(cpuOff), slices.Min(cpuOff), slices.Max(cpuOff))
	}
	b.Log(sb.String())
}

// cpuPerOp returns r's CPU time per request in microseconds, client and
// server together.
func cpuPerOp(r result) float64 {
	return float64(r.cpu) / float64(time.Microsecond) / float64(r.requests)
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// BenchmarkGather measures one collection of every metric of a trade
// server (8 markets, 64 accounts with a key each, the Go and process
// collectors as cmd/marketd registers them): what each Prometheus scrape
// costs the process, besides encoding.
func BenchmarkGather(b *testing.B) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ts := startTradeWith(b, false, reg)
	ts.setup(b, 8)
	b.ReportAllocs()
	cpuBefore, okBefore := cputime.Process()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
	if cpuAfter, okAfter := cputime.Process(); okBefore && okAfter {
		b.ReportMetric(float64(cpuAfter-cpuBefore)/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
	}
}
