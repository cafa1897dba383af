package load

import (
	"cmp"
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
	// Snapshot is true when a snapshot was being taken during part of the
	// second (MarkSnapshots).
	Snapshot bool `json:"snapshot,omitempty"`
	// Collection is true when the second overlaps a window in which one of
	// the server's garbage collections ended (MarkCollections).
	Collection bool `json:"collection,omitempty"`
	// Paused is true when the server was paused during part of the
	// second (Options.Pauses).
	Paused bool `json:"paused,omitempty"`
}

// SlowRequest is one of a run's slowest requests.
type SlowRequest struct {
	// AtMs is when it was sent (closed loop) or due (open loop), in
	// milliseconds from the run's start; At is the same in wall-clock time,
	// to find it in a trace of the server.
	AtMs      float64   `json:"at_ms"`
	At        time.Time `json:"at"`
	LatencyMs float64   `json:"latency_ms"`
	Status    string    `json:"status"`
	Op        string    `json:"op"`
}

// Span is a Window that overlaps a run, in seconds from the run's start
// (negative: before it began).
type Span struct {
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// Ended counts the server's garbage collections that ended in a
	// collection window; 0 in a snapshot's.
	Ended int `json:"ended,omitempty"`
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
	// Slowest are the run's slowest requests, slowest first.
	Slowest []SlowRequest `json:"slowest"`
	// Snapshots are the snapshots taken during the run (MarkSnapshots);
	// DuringSnapshots is the latency of the requests of the seconds
	// during which one was being taken, OutsideSnapshots of the other
	// seconds (merged from the per-second histograms, to 2 significant
	// digits), nil when there were none of those seconds.
	Snapshots        []Span   `json:"snapshots,omitempty"`
	DuringSnapshots  *Latency `json:"during_snapshots_ms,omitempty"`
	OutsideSnapshots *Latency `json:"outside_snapshots_ms,omitempty"`
	// Collections are the windows in which the server's garbage
	// collections ended during the run (MarkCollections), its latency
	// split between the seconds that overlap one and the others as for the
	// snapshots.
	Collections        []Span   `json:"collections,omitempty"`
	DuringCollections  *Latency `json:"during_collections_ms,omitempty"`
	OutsideCollections *Latency `json:"outside_collections_ms,omitempty"`
	// Pauses are the pauses of the server during the run
	// (Options.Pauses), its latency split between the seconds they touch
	// and the others as for the snapshots; PausesRealtime is true when
	// the pausing thread ran at a real-time priority (what that does and
	// does not ensure: pauseThreadPriority).
	Pauses         []Span   `json:"pauses,omitempty"`
	DuringPauses   *Latency `json:"during_pauses_ms,omitempty"`
	OutsidePauses  *Latency `json:"outside_pauses_ms,omitempty"`
	PausesRealtime bool     `json:"pauses_realtime,omitempty"`
	// CPU is the CPU time the run cost per request, nil for a run that
	// sent none.
	CPU *CPUUse `json:"cpu,omitempty"`

	start       time.Time
	hist        *hdrhistogram.Histogram
	secondHists []*hdrhistogram.Histogram
}

// Errors returns the requests not answered 2xx.
func (r *Result) Errors() int64 { return r.Requests - r.OK }

// Histogram returns the run's merged latency histogram, in microseconds.
func (r *Result) Histogram() *hdrhistogram.Histogram { return r.hist }

func summarize(name string, o Options, start time.Time, elapsed time.Duration, recs []*recorder, seconds []secondTotal) *Result {
	r := &Result{Target: name, Mode: o.Mode(), Conns: o.Conns, IntendedRate: o.Rate, Seconds: elapsed.Seconds(),
		ByStatus: make(map[string]int64), hist: merged(recs), start: start}
	var slow []slowRequest
	for _, rec := range recs {
		slow = append(slow, rec.slowest...)
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
		r.secondHists = append(r.secondHists, s.h)
	}
	slices.SortFunc(slow, func(a, b slowRequest) int { return cmp.Compare(b.latency, a.latency) })
	for _, s := range slow[:min(len(slow), slowestKept)] {
		r.Slowest = append(r.Slowest, SlowRequest{AtMs: float64(s.from.Sub(start)) / float64(time.Millisecond), At: s.from.UTC(),
			LatencyMs: float64(s.latency) / float64(time.Millisecond), Status: statusName(s.status), Op: s.op.String()})
	}
	return r
}

// MarkSnapshots notes the snapshots of ws that overlap the run: their
// spans, the seconds they touch, and the latency of those seconds against
// that of the others.
func (r *Result) MarkSnapshots(ws []Window) {
	var touched []bool
	r.Snapshots, touched, r.DuringSnapshots, r.OutsideSnapshots = r.split(ws)
	for i := range r.Series {
		r.Series[i].Snapshot = touched[i]
	}
}

// MarkCollections notes the windows of ws, in which the server's garbage
// collections ended (MetricsWatch), that overlap the run: their spans,
// the seconds they touch, and the latency of those seconds against that
// of the others.
func (r *Result) MarkCollections(ws []Window) {
	var touched []bool
	r.Collections, touched, r.DuringCollections, r.OutsideCollections = r.split(ws)
	for i := range r.Series {
		r.Series[i].Collection = touched[i]
	}
}

// MarkPauses notes the pauses of ws (Options.Pauses): their spans, the
// seconds they touch, and the latency of those seconds against that of
// the others; realtime says whether the pausing thread ran at a
// real-time priority.
func (r *Result) MarkPauses(ws []Window, realtime bool) {
	var touched []bool
	r.Pauses, touched, r.DuringPauses, r.OutsidePauses = r.split(ws)
	r.PausesRealtime = realtime
	for i := range r.Series {
		r.Series[i].Paused = touched[i]
	}
}

// split returns the windows of ws that overlap the run as spans, which of
// its seconds they touch (by index in Series), and the latency of the
// requests of those seconds and that of the others (merged from the
// per-second histograms); both latencies are nil when no window overlaps,
// and each is nil without seconds of its kind.
func (r *Result) split(ws []Window) (spans []Span, touched []bool, during, outside *Latency) {
	end := r.start.Add(time.Duration(r.Seconds * float64(time.Second)))
	for _, w := range ws {
		if w.End.Before(r.start) || w.Start.After(end) {
			continue
		}
		spans = append(spans, Span{StartS: w.Start.Sub(r.start).Seconds(), EndS: w.End.Sub(r.start).Seconds(), Ended: w.Ended})
	}
	touched = make([]bool, len(r.Series))
	in, out := newSecondHistogram(), newSecondHistogram()
	for i, sec := range r.Series {
		for _, sp := range spans {
			if sp.StartS < float64(sec.T+1) && sp.EndS >= float64(sec.T) {
				touched[i] = true
			}
		}
		if touched[i] {
			in.Merge(r.secondHists[i])
		} else {
			out.Merge(r.secondHists[i])
		}
	}
	if len(spans) == 0 {
		return nil, touched, nil, nil
	}
	return spans, touched, latencyIfAny(in), latencyIfAny(out)
}

// latencyIfAny returns h's latency, nil when h holds nothing.
func latencyIfAny(h *hdrhistogram.Histogram) *Latency {
	if h.TotalCount() == 0 {
		return nil
	}
	l := latencyOf(h)
	return &l
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
