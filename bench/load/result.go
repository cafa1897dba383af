package load

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Latency holds a run's latency percentiles and maximum, in milliseconds.
type Latency struct {
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	P9999 float64 `json:"p99_99"`
	Max   float64 `json:"max"`
}

func latencyOf(h *hdrhistogram.Histogram) Latency {
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Latency{
		P50: ms(h.ValueAtQuantile(50)), P90: ms(h.ValueAtQuantile(90)), P99: ms(h.ValueAtQuantile(99)),
		P999: ms(h.ValueAtQuantile(99.9)), P9999: ms(h.ValueAtQuantile(99.99)), Max: ms(h.Max()),
	}
}

// Second is one second of a run's time series: the requests sent (closed
// loop) or due (open loop) in that second.
type Second struct {
	// T is the second's index from the run's start.
	T      int   `json:"t"`
	OK     int64 `json:"ok"`
	Errors int64 `json:"errors"`
	// ErrorsByStatus splits Errors by status ("none": no answer).
	ErrorsByStatus map[string]int64 `json:"errors_by_status,omitempty"`
	LatencyP       Latency          `json:"latency_ms"`
}

// Result is what one run measured.
type Result struct {
	Target string `json:"target"`
	// Round is the run's round in a comparison (from 1), 0 otherwise.
	Round int    `json:"round,omitempty"`
	Mode  string `json:"mode"`
	Conns int    `json:"conns"`
	// IntendedRate is the open loop's target (requests per second).
	IntendedRate float64 `json:"intended_rate,omitempty"`
	Seconds      float64 `json:"seconds"`
	// Requests counts the requests sent (answered or not); OK those
	// answered 2xx.
	Requests int64 `json:"requests"`
	OK       int64 `json:"ok"`
	// ByStatus counts the requests by status ("none": no answer).
	ByStatus map[string]int64 `json:"by_status"`
	// AchievedRate is Requests per second; Throughput OK per second.
	AchievedRate float64 `json:"achieved_rate"`
	Throughput   float64 `json:"throughput"`
	// Late counts open-loop requests sent more than a millisecond after
	// they were due, NotSent those still unsent when the run ended;
	// MaxSendLagMs is the largest delay of a sending.
	Late         int64    `json:"late,omitempty"`
	NotSent      int64    `json:"not_sent,omitempty"`
	MaxSendLagMs float64  `json:"max_send_lag_ms,omitempty"`
	Latency      Latency  `json:"latency_ms"`
	Series       []Second `json:"series"`

	hist *hdrhistogram.Histogram
}

// Errors returns the requests not answered 2xx.
func (r *Result) Errors() int64 { return r.Requests - r.OK }

// Histogram returns the run's merged latency histogram, in microseconds.
func (r *Result) Histogram() *hdrhistogram.Histogram { return r.hist }

func summarize(name string, o Options, elapsed time.Duration, recs []*recorder, seconds []secondTotal) *Result {
	r := &Result{Target: name, Mode: o.Mode(), Conns: o.Conns, IntendedRate: o.Rate, Seconds: elapsed.Seconds(),
		ByStatus: make(map[string]int64), hist: merged(recs)}
	for _, rec := range recs {
		for status, n := range rec.byStatus {
			r.Requests += n
			if status >= 200 && status < 300 {
				r.OK += n
			}
			r.ByStatus[statusName(status)] += n
		}
		r.Late += rec.late
		r.NotSent += rec.notSent
		r.MaxSendLagMs = max(r.MaxSendLagMs, float64(rec.maxLag)/float64(time.Millisecond))
	}
	r.AchievedRate = float64(r.Requests) / elapsed.Seconds()
	r.Throughput = float64(r.OK) / elapsed.Seconds()
	r.Latency = latencyOf(r.hist)
	for i, s := range seconds {
		r.Series = append(r.Series, Second{T: i, OK: s.ok, Errors: s.errs, ErrorsByStatus: s.errors, LatencyP: latencyOf(s.h)})
	}
	return r
}

func statusName(status int) string {
	if status == statusTransportError {
		return "none"
	}
	return strconv.Itoa(status)
}

// StatusLine returns the counts by status, "200: 1234, 400: 5".
func (r *Result) StatusLine() string {
	line := ""
	for _, k := range slices.Sorted(maps.Keys(r.ByStatus)) {
		if line != "" {
			line += ", "
		}
		line += fmt.Sprintf("%s: %d", k, r.ByStatus[k])
	}
	return line
}
