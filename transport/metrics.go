package transport

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// HTTP metrics (docs/OPERATIONS.md, "Metrics"). Requests are labelled with
// the route table's path pattern, never the raw path, so that an id in a
// path cannot become a label value; what no route takes is labelled
// routeNone.
const (
	routeNone = "none"
	// minStatus and maxStatus bound the status codes counted per route;
	// fasthttp answers only codes in this range.
	minStatus = 100
	maxStatus = 599
)

// latencyBuckets are the request-duration histogram's upper bounds in
// seconds: 100 us to 10 s, about three per decade, so that the durable
// trade path's p50 of 3-4 ms and p99 of 10-15 ms (docs/PERFORMANCE.md, "HTTP
// path") and a stalled request each land in a bucket that says which.
var latencyBuckets = [...]float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// refusal is why a request was refused, for marketd_http_refusals_total.
type refusal uint8

const (
	refusalUnauthorized refusal = iota // 401
	refusalForbidden                   // 403
	refusalBodyTooLarge                // 413
	refusalRateLimited                 // 429
	refusalUnavailable                 // 503: busy, shutting down, recovering, log failed
	numRefusals
)

var refusalNames = [numRefusals]string{"unauthorized", "forbidden", "body_too_large", "rate_limited", "unavailable"}

// refusalOf returns the refusal a status code counts as, if any.
func refusalOf(status int) (refusal, bool) {
	switch status {
	case fasthttp.StatusUnauthorized:
		return refusalUnauthorized, true
	case fasthttp.StatusForbidden:
		return refusalForbidden, true
	case fasthttp.StatusRequestEntityTooLarge:
		return refusalBodyTooLarge, true
	case fasthttp.StatusTooManyRequests:
		return refusalRateLimited, true
	case fasthttp.StatusServiceUnavailable:
		return refusalUnavailable, true
	}
	return 0, false
}

// routeCounts are one route's request counts by status code and its
// duration histogram. The request path pays three atomic adds in its
// connection's shard (the 200 count, a bucket and the duration's sum)
// and one in codes for any other status; the collector turns them into
// samples when scraped, so that no label child is looked up per request.
type routeCounts struct {
	route, method string
	codes         [maxStatus - minStatus + 1]atomic.Uint64 // every status but 200
	timed         bool                                     // the duration is exported (not routeNone)
	shards        [connShards]routeShard
}

// routeShard is one shard of a route's hot counts. Its pad keeps two
// shards' counts at least a cache line apart however the route is aligned.
type routeShard struct {
	ok       atomic.Uint64                          // status 200
	buckets  [len(latencyBuckets) + 1]atomic.Uint64 // by the first bound at or above the duration; the last: above every bound
	sumNanos atomic.Uint64
	_        [64]byte
}

// latencyBoundNanos are latencyBuckets in nanoseconds, so that a request's
// duration is placed without a conversion to seconds.
var latencyBoundNanos = func() (b [len(latencyBuckets)]int64) {
	for i, s := range latencyBuckets {
		b[i] = int64(math.Round(s * 1e9))
	}
	return b
}()

// observe counts one request of the route that took d and was answered
// with status, in shard.
func (rc *routeCounts) observe(shard int, status int, d time.Duration) {
	sh := &rc.shards[shard]
	if status == fasthttp.StatusOK {
		sh.ok.Add(1)
	} else if status >= minStatus && status <= maxStatus {
		rc.codes[status-minStatus].Add(1)
	}
	if !rc.timed {
		return
	}
	// Past the last bound at once, as prometheus' histogram does: a stalled
	// request, or a benchmark's context timed from its start, walks no list.
	i := len(latencyBoundNanos)
	if int64(d) <= latencyBoundNanos[i-1] {
		i = 0
		for int64(d) > latencyBoundNanos[i] {
			i++
		}
	}
	sh.buckets[i].Add(1)
	sh.sumNanos.Add(uint64(max(d, 0)))
}

// code returns the requests of the route answered with status.
func (rc *routeCounts) code(status int) uint64 {
	n := rc.codes[status-minStatus].Load()
	if status == fasthttp.StatusOK {
		for i := range rc.shards {
			n += rc.shards[i].ok.Load()
		}
	}
	return n
}

// histogram returns the route's duration histogram as a constant metric.
func (rc *routeCounts) histogram(desc *prometheus.Desc) prometheus.Metric {
	var counts [len(latencyBuckets) + 1]uint64
	var sum uint64
	for i := range rc.shards {
		sh := &rc.shards[i]
		for j := range counts {
			counts[j] += sh.buckets[j].Load()
		}
		sum += sh.sumNanos.Load()
	}
	cumulative := make(map[float64]uint64, len(latencyBuckets))
	var total uint64
	for j, bound := range latencyBuckets {
		total += counts[j]
		cumulative[bound] = total
	}
	total += counts[len(latencyBuckets)]
	return prometheus.MustNewConstHistogram(desc, total, float64(sum)/1e9, cumulative, rc.route, rc.method)
}

// httpMetrics are the server's request metrics; nil when Config.Metrics and
// Config.SlowRequest are nil, and then no request pays for them.
type httpMetrics struct {
	// slow is Config.SlowRequest, told of a request that took longer than
	// slowAfter.
	slow      func(route string, took time.Duration)
	slowAfter time.Duration

	routes   []*routeCounts // every route of the table, then the extra ones
	none     *routeCounts   // unknown paths and methods, malformed requests
	inFlight [connShards]struct {
		n atomic.Int64
		_ [64 - 8]byte
	}
	refusals [numRefusals]atomic.Uint64

	requestsDesc, inFlightDesc, refusalsDesc, internalDesc, durationDesc *prometheus.Desc
}

// newHTTPMetrics returns the metrics, to be registered once every route
// is added.
func newHTTPMetrics() *httpMetrics {
	m := &httpMetrics{
		durationDesc: prometheus.NewDesc("marketd_http_request_duration_seconds",
			"Time from a request read whole to its answer ready (the handler, the wait for the log included), by route pattern and method.",
			[]string{"route", "method"}, nil),
		requestsDesc: prometheus.NewDesc("marketd_http_requests_total",
			"HTTP requests answered, by route pattern, method and status code.",
			[]string{"route", "method", "code"}, nil),
		inFlightDesc: prometheus.NewDesc("marketd_http_requests_in_flight",
			"HTTP requests being handled now.", nil, nil),
		refusalsDesc: prometheus.NewDesc("marketd_http_refusals_total",
			"HTTP requests refused, by reason: unauthorized (401), forbidden (403), body_too_large (413), rate_limited (429), unavailable (503: market busy, too many password checks or clients, recovering, draining, log failed).",
			[]string{"reason"}, nil),
		internalDesc: prometheus.NewDesc("marketd_http_internal_errors_total",
			"HTTP requests answered 500 Internal server error (each logged with its cause), on every route; exported from start, so that its rate exists before the first.",
			nil, nil),
	}
	m.none = m.route(routeNone, "")
	return m
}

// route returns the counts of one route pattern, registered for scraping;
// call it only while the router is built.
func (m *httpMetrics) route(path, method string) *routeCounts {
	rc := &routeCounts{route: path, method: method, timed: path != routeNone}
	m.routes = append(m.routes, rc)
	return rc
}

// Describe implements prometheus.Collector.
func (m *httpMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.requestsDesc
	ch <- m.inFlightDesc
	ch <- m.refusalsDesc
	ch <- m.internalDesc
	ch <- m.durationDesc
}

// Collect implements prometheus.Collector: the request counts that are not
// zero, the requests in flight and every refusal reason.
func (m *httpMetrics) Collect(ch chan<- prometheus.Metric) {
	var internal uint64
	for _, rc := range m.routes {
		for status := minStatus; status <= maxStatus; status++ {
			if n := rc.code(status); n > 0 {
				ch <- prometheus.MustNewConstMetric(m.requestsDesc, prometheus.CounterValue, float64(n),
					rc.route, rc.method, strconv.Itoa(status))
			}
		}
		internal += rc.code(fasthttp.StatusInternalServerError)
		if rc.timed {
			ch <- rc.histogram(m.durationDesc)
		}
	}
	ch <- prometheus.MustNewConstMetric(m.internalDesc, prometheus.CounterValue, float64(internal))
	var inFlight int64
	for i := range m.inFlight {
		inFlight += m.inFlight[i].n.Load()
	}
	ch <- prometheus.MustNewConstMetric(m.inFlightDesc, prometheus.GaugeValue, float64(inFlight))
	for r := range numRefusals {
		ch <- prometheus.MustNewConstMetric(m.refusalsDesc, prometheus.CounterValue,
			float64(m.refusals[r].Load()), refusalNames[r])
	}
}

// count records one answered request of rc, which took d (ignored for a
// route that is not timed).
func (m *httpMetrics) count(rc *routeCounts, ctx *fasthttp.RequestCtx, shard int, d time.Duration) {
	status := ctx.Response.StatusCode()
	rc.observe(shard, status, d)
	if r, ok := refusalOf(status); ok {
		m.refusals[r].Add(1)
	}
}

// instrument wraps one route's handler: requests in flight, the count by
// status code, the slow request's report, and the duration from the
// moment the request was read whole (fasthttp reads the clock then, before
// calling the handler, so this costs one clock read). A panic is recovered
// here, by onPanic, rather than by the router around this handler, so that
// its 500 is counted with its route. A nil m returns h as it is: only the
// router recovers its panics then, and Server.route leaves it the trade.
func (m *httpMetrics) instrument(path, method string, h fasthttp.RequestHandler, onPanic func(*fasthttp.RequestCtx, any)) fasthttp.RequestHandler {
	if m == nil {
		return h
	}
	rc := m.route(path, method)
	return func(ctx *fasthttp.RequestCtx) {
		shard := connShard(ctx)
		inFlight := &m.inFlight[shard].n
		inFlight.Add(1)
		defer func() {
			if v := recover(); v != nil {
				onPanic(ctx, v)
			}
			inFlight.Add(-1)
			took := time.Since(ctx.Time())
			m.count(rc, ctx, shard, took)
			if m.slow != nil && took > m.slowAfter {
				m.slow(path, took)
			}
		}()
		h(ctx)
	}
}

// countUnrouted counts an answer given without a route: unknown paths and
// methods, and what fasthttp refuses before routing.
func (m *httpMetrics) countUnrouted(ctx *fasthttp.RequestCtx) {
	if m != nil {
		m.count(m.none, ctx, connShard(ctx), 0)
	}
}

// metricsHandler serves the gathered metrics in Prometheus' text format
// through promhttp, adapted to fasthttp.
func metricsHandler(g prometheus.Gatherer, log *slog.Logger) fasthttp.RequestHandler {
	return fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:      promLogger{log},
		ErrorHandling: promhttp.ContinueOnError,
	}))
}

// promLogger sends promhttp's errors to the server's logger.
type promLogger struct{ l *slog.Logger }

// Println logs one promhttp error.
func (p promLogger) Println(v ...any) { p.l.Error("metrics: " + fmt.Sprint(v...)) }
