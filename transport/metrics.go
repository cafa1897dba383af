package transport

import (
	"fmt"
	"log/slog"
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
var latencyBuckets = []float64{
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

// routeCounts are one route's request counts by status code. The request
// path pays one atomic add; the collector turns the non-zero counts into
// samples when scraped, so that no label child is looked up per request.
type routeCounts struct {
	route, method string
	codes         [maxStatus - minStatus + 1]atomic.Uint64
	duration      prometheus.Observer // resolved once, at start
}

// httpMetrics are the server's request metrics; nil when Config.Metrics is
// nil, and then no request pays for them.
type httpMetrics struct {
	routes   []*routeCounts // every route of the table, then the extra ones
	none     *routeCounts   // unknown paths and methods, malformed requests
	inFlight atomic.Int64
	refusals [numRefusals]atomic.Uint64
	duration *prometheus.HistogramVec

	requestsDesc, inFlightDesc, refusalsDesc, internalDesc *prometheus.Desc
}

// newHTTPMetrics returns the metrics, to be registered once every route
// is added.
func newHTTPMetrics() *httpMetrics {
	m := &httpMetrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "marketd_http_request_duration_seconds",
			Help:    "Time from a request read whole to its answer ready (the handler, the wait for the log included), by route pattern and method.",
			Buckets: latencyBuckets,
		}, []string{"route", "method"}),
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
	rc := &routeCounts{route: path, method: method}
	if path != routeNone {
		rc.duration = m.duration.WithLabelValues(path, method)
	}
	m.routes = append(m.routes, rc)
	return rc
}

// Describe implements prometheus.Collector.
func (m *httpMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.requestsDesc
	ch <- m.inFlightDesc
	ch <- m.refusalsDesc
	ch <- m.internalDesc
}

// Collect implements prometheus.Collector: the request counts that are not
// zero, the requests in flight and every refusal reason.
func (m *httpMetrics) Collect(ch chan<- prometheus.Metric) {
	var internal uint64
	for _, rc := range m.routes {
		for i := range rc.codes {
			if n := rc.codes[i].Load(); n > 0 {
				ch <- prometheus.MustNewConstMetric(m.requestsDesc, prometheus.CounterValue, float64(n),
					rc.route, rc.method, strconv.Itoa(minStatus+i))
			}
		}
		internal += rc.codes[fasthttp.StatusInternalServerError-minStatus].Load()
	}
	ch <- prometheus.MustNewConstMetric(m.internalDesc, prometheus.CounterValue, float64(internal))
	ch <- prometheus.MustNewConstMetric(m.inFlightDesc, prometheus.GaugeValue, float64(m.inFlight.Load()))
	for r := range numRefusals {
		ch <- prometheus.MustNewConstMetric(m.refusalsDesc, prometheus.CounterValue,
			float64(m.refusals[r].Load()), refusalNames[r])
	}
}

// count records one answered request of rc.
func (m *httpMetrics) count(rc *routeCounts, ctx *fasthttp.RequestCtx) {
	status := ctx.Response.StatusCode()
	if status >= minStatus && status <= maxStatus {
		rc.codes[status-minStatus].Add(1)
	}
	if r, ok := refusalOf(status); ok {
		m.refusals[r].Add(1)
	}
}

// instrument wraps one route's handler: requests in flight, the count by
// status code, and the duration from the moment the request was read whole
// (fasthttp reads the clock then, before calling the handler, so this costs
// one clock read). A panic is recovered here,
// by onPanic, rather than by the router around this handler, so that its
// 500 is counted with its route.
func (m *httpMetrics) instrument(path, method string, h fasthttp.RequestHandler, onPanic func(*fasthttp.RequestCtx, any)) fasthttp.RequestHandler {
	if m == nil {
		return h
	}
	rc := m.route(path, method)
	return func(ctx *fasthttp.RequestCtx) {
		m.inFlight.Add(1)
		defer func() {
			if v := recover(); v != nil {
				onPanic(ctx, v)
			}
			m.inFlight.Add(-1)
			m.count(rc, ctx)
			rc.duration.Observe(time.Since(ctx.Time()).Seconds())
		}()
		h(ctx)
	}
}

// countUnrouted counts an answer given without a route: unknown paths and
// methods, and what fasthttp refuses before routing.
func (m *httpMetrics) countUnrouted(ctx *fasthttp.RequestCtx) {
	if m != nil {
		m.count(m.none, ctx)
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
