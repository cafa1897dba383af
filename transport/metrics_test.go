package transport

import (
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
)

// samples returns every sample of reg, keyed by name and labels in the
// form name{l1="v1",l2="v2"} (labels sorted by name, as Gather gives them);
// a histogram gives its _count and _sum.
func samples(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, lp.GetName()+`="`+lp.GetValue()+`"`)
			}
			key := func(suffix string) string {
				k := mf.GetName() + suffix
				if len(labels) > 0 {
					k += "{" + strings.Join(labels, ",") + "}"
				}
				return k
			}
			// By the type's name: the types' package is client_model,
			// not a dependency of marketd's own.
			switch mf.GetType().String() {
			case "COUNTER":
				out[key("")] = m.GetCounter().GetValue()
			case "GAUGE":
				out[key("")] = m.GetGauge().GetValue()
			case "HISTOGRAM":
				out[key("_count")] = float64(m.GetHistogram().GetSampleCount())
				out[key("_sum")] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}

// TestHTTPMetrics checks that requests are counted by route pattern (an id
// in the path is not a label), method and status, that the histogram
// counts every request, that refusals are counted by reason, and that
// /metrics serves them.
func TestHTTPMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	ts := newTestServer(t, Config{Metrics: reg, ServeMetrics: reg, AnonRatePerMinute: 3})
	user := ts.register("metrics")
	readKey := ts.newKey(user, "read")
	ts.expect(ts.do("GET", "/api/keys", auth{}, ""), http.StatusUnauthorized, "")
	ts.expect(ts.do("POST", "/api/keys", auth{key: readKey}, `{"name":"k"}`), http.StatusForbidden, "")
	ts.expect(ts.do("GET", "/api/markets/00000000-0000-0000-0000-000000000001", auth{key: readKey}, ""), http.StatusNotFound, "")
	ts.expect(ts.do("GET", "/api/markets/00000000-0000-0000-0000-000000000002", auth{key: readKey}, ""), http.StatusNotFound, "")
	ts.expect(ts.do("GET", "/no/such/path", auth{}, ""), http.StatusNotFound, "")
	// Announced, not sent: a client still writing the body when the
	// server closes after its 413 can get a reset instead of the answer.
	ts.expect(ts.announceOversized("POST", "/api/keys", auth{session: user}), http.StatusRequestEntityTooLarge, "")
	// The anonymous limit is 3 a minute for this client; register used
	// one and the 401 another.
	statuses := ts.concurrently(4, "GET", "/api/markets", auth{}, "")
	if statuses[http.StatusTooManyRequests] == 0 {
		t.Fatalf("no 429 among %v", statuses)
	}

	got := samples(t, reg)
	want := map[string]float64{
		`marketd_http_requests_total{code="201",method="POST",route="/api/auth/register"}`:    1,
		`marketd_http_requests_total{code="201",method="POST",route="/api/keys"}`:             1,
		`marketd_http_requests_total{code="401",method="GET",route="/api/keys"}`:              1,
		`marketd_http_requests_total{code="403",method="POST",route="/api/keys"}`:             1,
		`marketd_http_requests_total{code="404",method="GET",route="/api/markets/{id}"}`:      2,
		`marketd_http_requests_total{code="404",method="",route="none"}`:                      1,
		`marketd_http_requests_total{code="413",method="",route="none"}`:                      1,
		`marketd_http_requests_total{code="429",method="GET",route="/api/markets"}`:           float64(statuses[429]),
		`marketd_http_request_duration_seconds_count{method="GET",route="/api/markets/{id}"}`: 2,
		`marketd_http_request_duration_seconds_count{method="GET",route="/api/markets"}`:      4,
		`marketd_http_refusals_total{reason="unauthorized"}`:                                  1,
		`marketd_http_refusals_total{reason="forbidden"}`:                                     1,
		`marketd_http_refusals_total{reason="body_too_large"}`:                                1,
		`marketd_http_refusals_total{reason="rate_limited"}`:                                  float64(statuses[429]),
		`marketd_http_refusals_total{reason="unavailable"}`:                                   0,
		`marketd_http_requests_in_flight`:                                                     0,
		`marketd_http_internal_errors_total`:                                                  0,
		`marketd_ready`:                                                                       1,
		`marketd_phase{phase="serving"}`:                                                      1,
		`marketd_phase{phase="recovering"}`:                                                   0,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	for k := range got {
		if strings.Contains(k, "00000000-") {
			t.Errorf("an id became a label value: %s", k)
		}
	}

	resp, err := http.Get(ts.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `marketd_http_refusals_total{reason="forbidden"} 1`) {
		t.Fatalf("GET /metrics: %d\n%s", resp.StatusCode, body)
	}
}

// TestNoMetricsRoute checks that /metrics is absent unless asked for (with
// -metrics-addr it is served elsewhere), and that a server without a
// registry answers as before.
func TestNoMetricsRoute(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.expect(ts.do("GET", "/metrics", auth{}, ""), http.StatusNotFound, "Not found")
	ts.expect(ts.do("GET", "/debug/pprof/", auth{}, ""), http.StatusNotFound, "Not found")
	ts.expect(ts.do("GET", "/healthz", auth{}, ""), http.StatusOK, "")
}

// TestHTTPMetricsShardsAddUp: requests counted in the shards of many
// connections are exported as one count per route and status, one
// histogram and one in-flight gauge, as a single unsharded count would
// give them; a duration on a bucket's bound counts in that bucket.
func TestHTTPMetricsShardsAddUp(t *testing.T) {
	m := newHTTPMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	status := fasthttp.StatusOK
	var inside int64 // in flight, read while a request is being handled
	h := m.instrument("/r", fasthttp.MethodGet, func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(status)
		for i := range m.inFlight {
			inside += m.inFlight[i].n.Load()
		}
	}, func(*fasthttp.RequestCtx, any) {})
	const requests = 3*connShards + 5
	for i := range requests {
		var ctx fasthttp.RequestCtx
		ctx.Init(&fasthttp.Request{}, nil, nil) // a connection id of its own
		status = fasthttp.StatusOK
		if i%3 == 0 {
			status = fasthttp.StatusNotFound
		}
		h(&ctx)
	}
	got := samples(t, reg)
	want := map[string]float64{
		`marketd_http_requests_total{code="200",method="GET",route="/r"}`:      requests - (requests+2)/3,
		`marketd_http_requests_total{code="404",method="GET",route="/r"}`:      (requests + 2) / 3,
		`marketd_http_request_duration_seconds_count{method="GET",route="/r"}`: requests,
		`marketd_http_requests_in_flight`:                                      0,
		`marketd_http_requests_total{code="200",method="",route="none"}`:       0, // absent: never counted
		`marketd_http_request_duration_seconds_count{method="",route="none"}`:  0, // absent: not timed
	}
	for k, v := range want {
		if v == 0 && strings.Contains(k, "none") {
			if _, ok := got[k]; ok {
				t.Errorf("%s exported: %v", k, got[k])
			}
			continue
		}
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if inside != requests {
		t.Errorf("in flight inside the handler added up to %d over %d requests, want one each", inside, requests)
	}

	// Bucket bounds are inclusive, as prometheus' histogram has them.
	rc := m.route("/b", fasthttp.MethodGet)
	rc.observe(0, fasthttp.StatusOK, time.Millisecond) // a bound: 0.001
	rc.observe(5, fasthttp.StatusOK, time.Millisecond+1)
	rc.observe(7, fasthttp.StatusOK, time.Minute) // above every bound
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		for _, met := range mf.GetMetric() {
			if mf.GetName() != "marketd_http_request_duration_seconds" || met.GetLabel()[1].GetValue() != "/b" {
				continue
			}
			found = true
			hist := met.GetHistogram()
			cumulative := map[float64]uint64{}
			for _, b := range hist.GetBucket() {
				cumulative[b.GetUpperBound()] = b.GetCumulativeCount()
			}
			if hist.GetSampleCount() != 3 || cumulative[0.001] != 1 || cumulative[0.0025] != 2 || cumulative[10] != 2 {
				t.Errorf("count %d, buckets %v: want 3 in all, 1 at or under 1 ms, 2 under 2.5 ms and 10 s", hist.GetSampleCount(), cumulative)
			}
			if want := (2*time.Millisecond + 1 + time.Minute).Seconds(); math.Abs(hist.GetSampleSum()-want) > 1e-9 {
				t.Errorf("sum %v, want %v", hist.GetSampleSum(), want)
			}
		}
	}
	if !found {
		t.Error("no histogram of /b")
	}
}
