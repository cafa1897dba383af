package transport

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestSlowRequest checks that Config.SlowRequest is told of the requests
// that took longer than SlowRequestAfter, by route pattern (not the raw
// path), with or without the metrics, and of no other.
func TestSlowRequest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		after   time.Duration
		metrics bool
		want    int
	}{
		{"all past zero", 0, false, 2},
		{"all past zero with metrics", 0, true, 2},
		{"none past an hour", time.Hour, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var routes []string
			cfg := Config{SlowRequestAfter: tc.after, SlowRequest: func(route string, took time.Duration) {
				if took <= 0 {
					t.Errorf("route %s: took %v", route, took)
				}
				mu.Lock()
				routes = append(routes, route)
				mu.Unlock()
			}}
			if tc.metrics {
				cfg.Metrics = prometheus.NewRegistry()
			}
			ts := newTestServer(t, cfg)
			ts.expect(ts.do(http.MethodGet, "/api/markets/00000000-0000-4000-8000-000000000000", auth{}, ""), http.StatusNotFound, "")
			ts.expect(ts.do(http.MethodGet, "/healthz", auth{}, ""), http.StatusOK, "")
			mu.Lock()
			defer mu.Unlock()
			if len(routes) != tc.want {
				t.Fatalf("told of %d slow requests (%q), want %d", len(routes), routes, tc.want)
			}
			if tc.want > 0 && (routes[0] != "/api/markets/{id}" || routes[1] != "/healthz") {
				t.Fatalf("routes %q, want the route patterns", routes)
			}
		})
	}
}
