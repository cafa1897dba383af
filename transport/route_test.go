package transport

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marketd/core"
)

// TestTradeRouteAsRouter: Server.route, which hands POST
// /api/markets/trade to its handler without the router, answers every
// request as the router alone does: the trade's path and method, and the
// paths and methods next to them that the router refuses or routes
// elsewhere (a trailing slash, a doubled or escaped slash, another
// method, the batch route, a query).
func TestTradeRouteAsRouter(t *testing.T) {
	ts := newTestServer(t, Config{Metrics: prometheus.NewRegistry()}) // route's shortcut needs them
	s := ts.srv
	if s.tradeRoute == nil {
		t.Fatal("no trade route to hand POST /api/markets/trade to")
	}
	adm := ts.admin()
	market := ts.createMarket(adm, nil).ID.String()
	key := ts.newKey(ts.register("router"), "trade")
	trade := fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1,"type":"buy"}`, market)
	batch := fmt.Sprintf(`{"trades":[%s]}`, trade)
	viaRoute, viaRouter := s.withRequestID(s.route), s.withRequestID(s.router.Handler)
	for _, c := range []struct {
		method, uri, body string
		status            int
	}{
		{"POST", "/api/markets/trade", trade, 200},
		{"POST", "/api/markets/trade?x=1", trade, 200},
		{"POST", "/api/markets/trade", `{"market_id":1}`, 400},
		{"POST", "/api/markets/trade/", trade, 404},
		{"POST", "/api//markets/trade", trade, 404},
		{"POST", "/api/markets/%74rade", trade, 405}, // GET /api/markets/{id}
		{"POST", "/API/markets/trade", trade, 404},
		{"GET", "/api/markets/trade", "", 405},
		{"PUT", "/api/markets/trade", trade, 405},
		{"POST", "/api/markets/trades", batch, 200},
	} {
		var answers [2]map[string]any
		var allow [2]string
		for i, h := range []fasthttp.RequestHandler{viaRoute, viaRouter} {
			var ctx fasthttp.RequestCtx
			ctx.Init(&fasthttp.Request{}, benchClient, nil)
			ctx.Request.Header.SetMethod(c.method)
			ctx.Request.SetRequestURI(c.uri)
			ctx.Request.Header.Set("Authorization", "Bearer "+key)
			ctx.Request.SetBodyString(c.body)
			h(&ctx)
			if got := ctx.Response.StatusCode(); got != c.status {
				t.Fatalf("%s %s (handler %d): status %d, want %d: %s", c.method, c.uri, i, got, c.status, ctx.Response.Body())
			}
			if err := json.Unmarshal(ctx.Response.Body(), &answers[i]); err != nil {
				t.Fatalf("%s %s (handler %d): %v", c.method, c.uri, i, err)
			}
			allow[i] = string(ctx.Response.Header.Peek(fasthttp.HeaderAllow))
			// The ids, times, balances and sequence numbers of two trades
			// differ; their fields and every error's code must not.
			for _, k := range []string{"request_id", "trade_id", "created_at", "balance_after", "market_seq",
				"price_yes_after", "price_no_after", "cost", "vig", "results"} {
				if _, ok := answers[i][k]; ok {
					answers[i][k] = "set"
				}
			}
		}
		if a, b := fmt.Sprint(answers[0]), fmt.Sprint(answers[1]); a != b || allow[0] != allow[1] {
			t.Errorf("%s %s: route answered %s (Allow %q), the router %s (Allow %q)", c.method, c.uri, a, allow[0], b, allow[1])
		}
	}
}

// TestTradeRoutePanicAnswered: a panic in the trade route's handler is a
// logged 500 internal_error with the request's id (docs/API.md, "Errors"),
// as under the router, also on a server without metrics, whose route
// handlers have no metrics' wrapper to recover it. An engine with nothing
// in it makes admission panic.
func TestTradeRoutePanicAnswered(t *testing.T) {
	for _, withMetrics := range []bool{false, true} {
		t.Run(fmt.Sprintf("metrics %v", withMetrics), func(t *testing.T) {
			var cfg Config
			if withMetrics {
				cfg.Metrics = prometheus.NewRegistry()
			}
			ts := startTestServer(t, cfg, nil, func(s *Server) { s.eng = new(core.Engine) })
			r := ts.doHeaders("POST", "/api/markets/trade", auth{key: keyLiteralPrefix + strings.Repeat("0", keyHexLen)}, `{}`, map[string]string{HeaderRequestID: "panic-7"})
			if r.status != fasthttp.StatusInternalServerError || !strings.Contains(string(r.body), `"code":"internal_error"`) ||
				!strings.Contains(string(r.body), `"request_id":"panic-7"`) {
				t.Fatalf("status %d, body %s; want 500 internal_error with the request's id", r.status, r.body)
			}
		})
	}
}
