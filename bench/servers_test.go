package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marketd/bench/baseline"
	"marketd/bench/client"
	"marketd/core"
	"marketd/core/money"
	"marketd/internal/fstype"
	"marketd/internal/metrics"
	"marketd/transport"
	"marketd/wal"
)

const (
	// tradePath is the endpoint under test; the no-op server answers it
	// (and any other path) with baseline.NoopBody.
	tradePath = "/api/markets/trade"
	batchPath = "/api/markets/trades"
	// signupBonusUnits funds every benchmark account, in whole KP: a buy
	// of one share costs about 0.5 KP and the following sell returns most
	// of it, so no run comes near it.
	signupBonusUnits = 1_000_000
	// shutdownTimeout bounds a server's shutdown at the end of a benchmark.
	shutdownTimeout = 10 * time.Second
	// The benchmark's admin account and its password.
	adminName     = "admin"
	adminPassword = "admin-password"
)

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// listen opens a listener on a free loopback port.
func listen(b *testing.B) net.Listener {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatalf("listen: %v", err)
	}
	return ln
}

// startNoop serves baseline's no-op handler on a loopback port until the
// benchmark ends, and returns its address.
func startNoop(b *testing.B) string {
	b.Helper()
	return closeAtEnd(b, baseline.ServeNoop(listen(b)))
}

// startFsyncOnly serves baseline's fsync-only handler, its file in a
// temporary directory on disk, until the benchmark ends, and returns its
// address.
func startFsyncOnly(b *testing.B) string {
	b.Helper()
	srv, err := baseline.ServeFsyncOnly(listen(b), fstype.DiskTempDir(b), baseline.CommitOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return closeAtEnd(b, srv)
}

// serveHandler serves handler on a loopback port until the benchmark ends
// and returns its address.
func serveHandler(b *testing.B, name string, handler fasthttp.RequestHandler) string {
	b.Helper()
	return closeAtEnd(b, baseline.Serve(listen(b), name, handler))
}

// closeAtEnd closes srv when the benchmark ends, before the cleanups
// registered earlier run, and returns its address.
func closeAtEnd(b *testing.B, srv *baseline.Server) string {
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			b.Error(err)
		}
	})
	return srv.Addr()
}

// tradeServer is marketd's HTTP server over an engine and a real log in
// a temporary directory, on a loopback port, wired as cmd/marketd wires
// them (without the snapshot manager, which this benchmark leaves out).
type tradeServer struct {
	addr string
	srv  *transport.Server
	eng  *core.Engine
	log  *wal.Log
}

// startTrade starts a trade server that runs until the benchmark ends,
// then checks the state's invariants and closes the log.
func startTrade(b *testing.B, fsync bool) *tradeServer {
	b.Helper()
	return startTradeWith(b, fsync, nil)
}

// startTradeWith is startTrade with the metrics registered on reg, wired
// as cmd/marketd wires them (the log's commit observer, the HTTP metrics,
// the collectors of the engine and the log); nil leaves them all off.
// Core's own atomic counters cannot be turned off: they are part of core.
func startTradeWith(b *testing.B, fsync bool, reg *prometheus.Registry) *tradeServer {
	b.Helper()
	dir := fstype.DiskTempDir(b)
	opts := wal.Options{NoFsync: !fsync, Logger: quietLogger}
	var logMetrics *metrics.Log
	if reg != nil {
		logMetrics = metrics.NewLog(reg)
		opts.Observer = logMetrics
	}
	log, err := wal.Open(dir, opts)
	if err != nil {
		b.Fatalf("open log: %v", err)
	}
	log.Start()
	// The idempotent runs store a key per request: the cap of keys per
	// account must hold a whole run's.
	eng := core.NewEngine(core.NewState(), log, core.Config{Idempotency: core.IdempotencyLimits{Keys: 1 << 20}})
	tc := transport.Config{
		DefaultTier:       core.TierUnlimited,
		SignupBonus:       money.Units(signupBonusUnits),
		AnonRatePerMinute: -1,
		PasswordCost:      4,
		Logger:            quietLogger,
		// Every account and connection of the benchmark comes from one
		// address: the per-client limits would refuse the setup.
		RegistrationsPerHour:    -1,
		KeyChangesPerHour:       -1,
		PasswordChecksPerMinute: -1,
		MaxConnsPerClient:       -1,
	}
	if reg != nil {
		logMetrics.Watch(reg, log)
		metrics.RegisterEngine(reg, eng)
		tc.Metrics = reg
	}
	srv := transport.New(eng, tc)
	ln := listen(b)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			b.Errorf("shut down the server: %v", err)
		}
		if err := <-served; err != nil {
			b.Errorf("server: %v", err)
		}
		eng.Close()
		if err := eng.State().Check(); err != nil {
			b.Errorf("invariants after the benchmark: %v", err)
		}
		if err := log.Close(); err != nil {
			b.Errorf("close log: %v", err)
		}
	})
	return &tradeServer{addr: ln.Addr().String(), srv: srv, eng: eng, log: log}
}

// trades returns the number of trades made on the server's markets.
func (ts *tradeServer) trades() uint64 {
	var n uint64
	for _, v := range ts.eng.Markets() {
		for c := range v.Books {
			n += v.Books[c].Trades
		}
	}
	return n
}

// setup creates, over HTTP, markets markets and one account with its own
// trading key per worker, through package client (as marketd-load does),
// and returns the workers' trade workloads.
func (ts *tradeServer) setup(b *testing.B, markets int) []workload {
	b.Helper()
	c := client.New(ts.addr, 1, clientTimeout)
	defer c.Close()

	if err := ts.srv.CreateAdmin(context.Background(), adminName, adminPassword); err != nil {
		b.Fatal(err)
	}
	admin, _, err := c.Login(adminName, adminPassword)
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, markets)
	for i := range ids {
		m, err := c.CreateMarket(client.Credentials{Session: admin}, fmt.Sprintf("Benchmark market %d", i), 24*time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = m.ID.String()
	}
	keys := make([]string, driverConns)
	for i := range keys {
		name := fmt.Sprintf("bench-%02d", i)
		session, _, err := c.Register(name, "password-"+name)
		if err != nil {
			b.Fatal(err)
		}
		k, err := c.CreateKey(session, client.KeyRequest{Name: "bench", Scopes: []string{"read", "trade"}})
		if err != nil {
			b.Fatal(err)
		}
		keys[i] = k.Key
	}
	return tradeWorkloads(keys, ids)
}

// tradeWorkloads returns one workload per key: worker i alternates a buy
// and a sell of one share of side yes (even i) or no (odd i), so that
// prices stay near one half and positions near zero, moving to the next
// market after each pair, starting at market i modulo their number.
func tradeWorkloads(keys, markets []string) []workload {
	loads := make([]workload, len(keys))
	for i, key := range keys {
		side := "yes"
		if i%2 == 1 {
			side = "no"
		}
		bodies := make([][]byte, 0, 2*len(markets))
		for j := range markets {
			m := markets[(i+j)%len(markets)]
			for _, typ := range []string{"buy", "sell"} {
				bodies = append(bodies, fmt.Appendf(nil, `{"market_id":%q,"side":%q,"shares":1,"type":%q}`, m, side, typ))
			}
		}
		loads[i] = workload{authorization: "Bearer " + key, bodies: bodies}
	}
	return loads
}

// batchWorkloads returns the trade workloads as batches of size trades:
// each body holds the worker's next size trade bodies, in turn.
func batchWorkloads(loads []workload, size int) []workload {
	out := make([]workload, len(loads))
	for i, l := range loads {
		var bodies [][]byte
		for j := 0; j < len(l.bodies)*size; j += size {
			body := []byte(`{"trades":[`)
			for k := range size {
				if k > 0 {
					body = append(body, ',')
				}
				body = append(body, l.bodies[(j+k)%len(l.bodies)]...)
			}
			bodies = append(bodies, append(body, "]}"...))
		}
		out[i] = workload{authorization: l.authorization, bodies: bodies}
	}
	return out
}

// noopWorkloads returns workloads of the trade workloads' shape and sizes
// (keys of the real form, market IDs of UUID form), so that the no-op
// server reads the same requests as the trade server.
func noopWorkloads(markets int) []workload {
	keys := make([]string, driverConns)
	for i := range keys {
		keys[i] = fmt.Sprintf("svc_live_%032x", i)
	}
	ids := make([]string, markets)
	for i := range ids {
		ids[i] = fmt.Sprintf("00000000-0000-4000-8000-%012x", i)
	}
	return tradeWorkloads(keys, ids)
}
