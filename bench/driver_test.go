package bench

import (
	"context"
	"fmt"
	"math"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"marketd/internal/cputime"
)

const (
	// driverConns is the number of connections, and of workers, of the
	// load driver: the figure the HTTP target is stated at
	// (docs/PERFORMANCE.md, "HTTP path").
	driverConns = 64
	// clientTimeout bounds one request of the driver or of the setup; a
	// request that takes longer is a failure, not a slow figure.
	clientTimeout = 10 * time.Second
	// maxFailureBodyBytes bounds the answer quoted in a failure message.
	maxFailureBodyBytes = 256
)

// workload is what one worker sends: always the same path and
// Authorization header, the bodies in turn.
type workload struct {
	authorization string
	bodies        [][]byte
	// idempotent sends a new Idempotency-Key with every request.
	idempotent bool
}

// result is one measured run of the driver.
type result struct {
	requests int
	elapsed  time.Duration
	// latencies holds every request's latency, sorted.
	latencies []time.Duration
	// cpu is the CPU time the whole process (client and server) used
	// while the requests were sent; hasCPU is false where it is unknown.
	cpu    time.Duration
	hasCPU bool
}

// perSecond returns the run's throughput in requests per second.
func (r result) perSecond() float64 {
	return float64(r.requests) / r.elapsed.Seconds()
}

// percentile returns the latency at or below which a fraction p of the
// requests finished (nearest rank).
func (r result) percentile(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	rank := int(math.Ceil(p*float64(len(r.latencies)))) - 1
	return r.latencies[min(max(rank, 0), len(r.latencies)-1)]
}

// report reports r's throughput and latencies as the benchmark's metrics.
func report(b *testing.B, r result) {
	b.Helper()
	b.ReportMetric(r.perSecond(), "req/s")
	b.ReportMetric(float64(r.percentile(0.50))/float64(time.Millisecond), "p50-ms")
	b.ReportMetric(float64(r.percentile(0.99))/float64(time.Millisecond), "p99-ms")
	if r.hasCPU {
		// Against the wall time, this says whether a run was short of CPU
		// (both cores busy) or waiting.
		b.ReportMetric(float64(r.cpu)/float64(time.Microsecond)/float64(r.requests), "cpu-us/op")
	}
}

// workerStats is what one worker measured; only that worker writes it
// until the run ends.
type workerStats struct {
	latencies    []time.Duration
	failures     int
	firstFailure string
}

// drive sends b.N POST requests to path on the server at addr (host:port)
// over driverConns keep-alive connections, worker i sending loads[i]'s
// bodies in turn, and fails b if any request fails or is answered with
// another status than 200. The timer runs only while requests are sent:
// preparing the requests and computing the percentiles are outside it.
// The connections are opened by the first requests, inside it: 64
// loopback connects, nothing against the 100,000 requests of a run.
func drive(b *testing.B, addr, path string, loads []workload) result {
	b.Helper()
	if len(loads) != driverConns {
		b.Fatalf("BUG: %d workloads for %d workers", len(loads), driverConns)
	}
	hc := &fasthttp.HostClient{
		Addr:                addr,
		Name:                "marketd-bench",
		MaxConns:            driverConns,
		ReadTimeout:         clientTimeout,
		WriteTimeout:        clientTimeout,
		MaxIdleConnDuration: time.Minute,
		// Every worker holds at most one connection: none ever waits.
		MaxConnWaitTimeout: clientTimeout,
	}
	defer hc.CloseIdleConnections()
	uri := "http://" + addr + path
	stats := make([]workerStats, driverConns)
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for w := range driverConns {
		// b.N requests spread evenly: the first b.N%driverConns workers
		// send one more.
		n := b.N / driverConns
		if w < b.N%driverConns {
			n++
		}
		stats[w].latencies = make([]time.Duration, 0, n)
		ready.Add(1)
		done.Add(1)
		go func(st *workerStats, load workload) {
			defer done.Done()
			// The label lets a CPU profile (-cpuprofile) tell the client's
			// share from the server's: pprof -tagignore role=client.
			pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("role", "client")))
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.Header.SetMethod(fasthttp.MethodPost)
			req.SetRequestURI(uri)
			req.Header.SetContentType("application/json")
			req.Header.Set(fasthttp.HeaderAuthorization, load.authorization)
			// A key unique to the worker and the request: never a replay.
			key := fmt.Appendf(nil, "bench-%02d-", w)
			prefix := len(key)
			ready.Done()
			<-start
			for i := range n {
				req.SetBodyRaw(load.bodies[i%len(load.bodies)])
				if load.idempotent {
					key = strconv.AppendInt(key[:prefix], int64(i), 10)
					req.Header.SetBytesV("Idempotency-Key", key)
				}
				began := time.Now()
				err := hc.Do(req, resp)
				st.latencies = append(st.latencies, time.Since(began))
				if err == nil && resp.StatusCode() == fasthttp.StatusOK {
					continue
				}
				st.failures++
				if st.firstFailure == "" {
					st.firstFailure = describeFailure(req, resp, err)
				}
			}
		}(&stats[w], loads[w])
	}
	ready.Wait()
	b.ResetTimer()
	cpuBefore, okBefore := cputime.Process()
	began := time.Now()
	close(start)
	done.Wait()
	elapsed := time.Since(began)
	cpuAfter, okAfter := cputime.Process()
	b.StopTimer()

	r := result{requests: b.N, elapsed: elapsed, latencies: make([]time.Duration, 0, b.N),
		cpu: cpuAfter - cpuBefore, hasCPU: okBefore && okAfter}
	failures, first := 0, ""
	for _, st := range stats {
		r.latencies = append(r.latencies, st.latencies...)
		failures += st.failures
		if first == "" {
			first = st.firstFailure
		}
	}
	if failures > 0 {
		b.Fatalf("%d of %d requests failed; the first: %s", failures, b.N, first)
	}
	slices.Sort(r.latencies)
	return r
}

// describeFailure says what went wrong with one request, quoting its body
// and the answer.
func describeFailure(req *fasthttp.Request, resp *fasthttp.Response, err error) string {
	if err != nil {
		return fmt.Sprintf("body %s: %v", req.Body(), err)
	}
	body := resp.Body()
	if len(body) > maxFailureBodyBytes {
		body = body[:maxFailureBodyBytes]
	}
	return fmt.Sprintf("body %s: status %d, answer %s", req.Body(), resp.StatusCode(), body)
}
