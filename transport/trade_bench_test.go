package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/cputime"
	"marketd/wal"
)

// benchClient is the peer address of BenchmarkTradeRequest's requests.
var benchClient = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}

// BenchmarkTradeRequest measures the server's own CPU per POST
// /api/markets/trade (single) and per POST /api/markets/trades of 20
// trades (batch-20): the whole handler (request id, router, metrics,
// admission, body decode, engine, answer) called on request contexts
// without a socket, over an engine whose log does not fsync, with the
// metrics on as in cmd/marketd. The bodies are marketd-load's (buys and
// sells of one share, 8 markets); each caller has its own key. cpu-ns/op is the
// process's CPU per request, the figure to compare on a shared machine
// (docs/PERFORMANCE.md, "Transport: CPU per trade request").
func BenchmarkTradeRequest(b *testing.B) {
	log, err := wal.Open(b.TempDir(), wal.Options{NoFsync: true, Logger: quietLogger})
	if err != nil {
		b.Fatal(err)
	}
	log.Start()
	eng := core.NewEngine(core.NewState(), log, core.Config{CloseInterval: -1, OracleInterval: -1})
	srv := New(eng, Config{
		Metrics:                 prometheus.NewRegistry(),
		DefaultTier:             core.TierUnlimited,
		SignupBonus:             money.Units(100_000_000),
		PasswordCost:            4,
		RegistrationsPerHour:    -1,
		PasswordChecksPerMinute: -1,
		KeyChangesPerHour:       -1,
		Logger:                  quietLogger,
	})
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			b.Error(err)
		}
		eng.Close()
		if err := log.Close(); err != nil {
			b.Error(err)
		}
	})
	handler := srv.http.Handler
	// call sends one request through the handler and returns the
	// answer's body, failing unless its status is want.
	call := func(method, path, cookie, body string, want int) (*fasthttp.RequestCtx, map[string]any) {
		var ctx fasthttp.RequestCtx
		ctx.Init(&fasthttp.Request{}, benchClient, nil)
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI(path)
		if cookie != "" {
			ctx.Request.Header.SetCookie(sessionCookie, cookie)
		}
		ctx.Request.SetBodyString(body)
		handler(&ctx)
		if ctx.Response.StatusCode() != want {
			b.Fatalf("%s %s: status %d, body %s", method, path, ctx.Response.StatusCode(), ctx.Response.Body())
		}
		var m map[string]any
		if err := json.Unmarshal(ctx.Response.Body(), &m); err != nil {
			b.Fatalf("%s %s: %v", method, path, err)
		}
		return &ctx, m
	}
	session := func(ctx *fasthttp.RequestCtx) string {
		var c fasthttp.Cookie
		c.SetKey(sessionCookie)
		if !ctx.Response.Header.Cookie(&c) {
			b.Fatal("no session cookie")
		}
		return string(c.Value())
	}
	if err := srv.CreateAdmin(context.Background(), "admin", "admin-password"); err != nil {
		b.Fatal(err)
	}
	ctx, _ := call("POST", "/api/auth/login", "", `{"name":"admin","password":"admin-password"}`, 200)
	adm := session(ctx)
	var markets []string
	for i := range 8 {
		_, m := call("POST", "/api/markets", adm, fmt.Sprintf(
			`{"title":"Market %d","description":"d","category":"c","closes_at":%q}`,
			i, time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339)), 201)
		markets = append(markets, m["id"].(string))
	}
	const callers = 256
	var keys [callers][2]string // a key and its caller's market
	for i := range callers {
		ctx, _ := call("POST", "/api/auth/register", "", fmt.Sprintf(`{"name":"bench%d","password":"password-%d"}`, i, i), 201)
		_, k := call("POST", "/api/keys", session(ctx), `{"name":"k","scopes":["trade"]}`, 201)
		keys[i] = [2]string{k["key"].(string), markets[i%len(markets)]}
	}
	var next atomic.Uint32
	// trade returns a buy or a sell of one share of market, as marketd-load
	// sends them.
	trade := func(market string, sell bool) string {
		return fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1,"type":%q}`, market, map[bool]string{false: "buy", true: "sell"}[sell])
	}
	for _, c := range []struct {
		name  string
		path  string
		batch int // trades per request; 0: the single-trade route
	}{
		{"single", "/api/markets/trade", 0},
		{"batch-20", pathBatch, 20},
	} {
		b.Run(c.name, func(b *testing.B) {
			// 64 callers on 2 cores, as in the closed loop.
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			cpu0, ok0 := cputime.Process()
			b.RunParallel(func(pb *testing.PB) {
				k := keys[next.Add(1)%callers]
				// Buys and sells alternate, so that a caller's balance
				// stays put.
				var bodies [2][]byte
				for i := range bodies {
					if c.batch == 0 {
						bodies[i] = []byte(trade(k[1], i == 1))
						continue
					}
					items := make([]string, c.batch)
					for j := range items {
						items[j] = trade(k[1], j%2 == i)
					}
					bodies[i] = []byte(`{"trades":[` + strings.Join(items, ",") + `]}`)
				}
				var ctx fasthttp.RequestCtx
				ctx.Init(&fasthttp.Request{}, benchClient, nil)
				ctx.Request.Header.SetMethod(fasthttp.MethodPost)
				ctx.Request.SetRequestURI(c.path)
				ctx.Request.Header.SetContentType(contentTypeJSON)
				ctx.Request.Header.Set("Authorization", "Bearer "+k[0])
				for n := 0; pb.Next(); n++ {
					ctx.Request.SetBody(bodies[n&1])
					ctx.Response.Reset()
					handler(&ctx)
					if ctx.Response.StatusCode() != fasthttp.StatusOK {
						b.Errorf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
						return
					}
				}
			})
			if cpu1, ok1 := cputime.Process(); ok0 && ok1 {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
