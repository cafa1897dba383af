package transport

import (
	"testing"

	"github.com/valyala/fasthttp"

	"marketd/internal/cputime"
)

// BenchmarkInstrument measures what the HTTP metrics add to one request:
// the same handler wrapped with metrics on and off, on one reused request
// context (no network), so that the difference is the instrumentation's
// own cost (docs/PERFORMANCE.md, "Instrumentation").
func BenchmarkInstrument(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		var m *httpMetrics
		if on {
			name = "on"
			m = newHTTPMetrics()
		}
		b.Run(name, func(b *testing.B) {
			h := m.instrument("/api/markets/trade", fasthttp.MethodPost, func(ctx *fasthttp.RequestCtx) {
				ctx.SetStatusCode(fasthttp.StatusOK)
			}, func(*fasthttp.RequestCtx, any) {})
			cpuBefore, okBefore := cputime.Process()
			b.RunParallel(func(pb *testing.PB) {
				// A connection id per goroutine, as each of a server's
				// connections has (the metrics' shard).
				var ctx fasthttp.RequestCtx
				ctx.Init(&fasthttp.Request{}, nil, nil)
				for pb.Next() {
					h(&ctx)
				}
			})
			// The machine may be shared: CPU time per request, beside the
			// wall time of ns/op, is what the instrumentation costs.
			if cpuAfter, okAfter := cputime.Process(); okBefore && okAfter {
				b.ReportMetric(float64(cpuAfter-cpuBefore)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
