package populate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/bench/populate"
	"marketd/core"
	"marketd/core/money"
	"marketd/internal/cputime"
	"marketd/snapshot"
	"marketd/wal"
)

// millionAccounts is a server's state as marketd holds it after starting
// on a directory filled with 1,000,000 accounts: recovered from the
// snapshot, with its log open. Filled once per test binary.
var million struct {
	once sync.Once
	dir  string
	st   *core.State
	log  *wal.Log
	err  error
}

const heapAccounts = 1_000_000

func recoveredMillion(b *testing.B) (*core.State, *wal.Log, string) {
	million.once.Do(func() {
		dir, err := os.MkdirTemp(populateTempRoot(), "marketd-heap-")
		if err != nil {
			million.err = err
			return
		}
		million.dir = dir
		data := filepath.Join(dir, "data")
		if _, err := populate.Accounts(context.Background(), populate.Options{Dir: data, Accounts: heapAccounts}); err != nil {
			million.err = err
			return
		}
		log, err := wal.Open(filepath.Join(data, "wal"), wal.Options{})
		if err != nil {
			million.err = err
			return
		}
		st, _, err := snapshot.Recover(nil, filepath.Join(data, "snapshots"), log, nil)
		if err != nil {
			million.err = err
			return
		}
		log.Start()
		million.st, million.log = st, log
	})
	if million.err != nil {
		b.Fatal(million.err)
	}
	return million.st, million.log, million.dir
}

// populateTempRoot is where the benchmark's directory goes: the disk the
// repository is on, as a server's data directory would be.
func populateTempRoot() string {
	if d := os.Getenv("MARKETD_BENCH_DIR"); d != "" {
		return d
	}
	return ""
}

// gcCPU returns the CPU the collector has used so far, all its classes.
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}

// BenchmarkMillionAccounts measures, over the heap of a state recovered
// from a snapshot of 1,000,000 accounts (what marketd holds in the
// snapshot row of docs/PERFORMANCE.md): gc, a full collection
// (runtime.GC: its wall time, the collector's CPU, and the heap's objects
// and scannable bytes, which its mark phase walks); snapshot, a snapshot of
// it written as Run writes one (unpaced): its wall time and the process's
// CPU for it; gc-traded, gc again after every account has made one trade
// (tradeEveryAccount). Its trades are made once, before the timed loop,
// and run last, since they change the state the others measure.
func BenchmarkMillionAccounts(b *testing.B) {
	st, log, dir := recoveredMillion(b)
	b.Run("gc", measureGC)
	b.Run("snapshot", func(b *testing.B) {
		snapDir := filepath.Join(dir, "snaps-bench")
		if err := os.MkdirAll(snapDir, 0o750); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var cpu, gc time.Duration
		for b.Loop() {
			// A manager that knows of no snapshot takes one at once.
			m := snapshot.NewManager(st, log, snapshot.Options{Dir: snapDir}, nil)
			c0, _ := cputime.Process()
			g0 := gcCPU()
			if _, err := m.Take(context.Background()); err != nil {
				b.Fatal(err)
			}
			c1, _ := cputime.Process()
			cpu += c1 - c0
			gc += gcCPU() - g0
		}
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms")
		b.ReportMetric(float64(gc.Microseconds())/1000/float64(b.N), "gc-cpu-ms")
	})
	b.Run("gc-traded", func(b *testing.B) {
		n := tradeEveryAccount(b, st, log)
		measureGC(b)
		// After the loop, which drops the metrics reported before it.
		b.ReportMetric(float64(n), "traded-accounts")
	})
}

// measureGC runs b.N full collections (runtime.GC) and reports their wall
// time, the collector's CPU and the process's, each per collection, and
// the heap's objects, scannable bytes and live bytes after the last.
func measureGC(b *testing.B) {
	runtime.GC()
	var gcTotal, wall, cpu time.Duration
	for b.Loop() {
		g0, t0 := gcCPU(), time.Now()
		c0, _ := cputime.Process()
		runtime.GC()
		c1, _ := cputime.Process()
		wall += time.Since(t0)
		gcTotal += gcCPU() - g0
		cpu += c1 - c0
	}
	s := []metrics.Sample{{Name: "/gc/heap/objects:objects"}, {Name: "/gc/scan/heap:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "gc-ms")
	b.ReportMetric(float64(gcTotal.Microseconds())/1000/float64(b.N), "gc-cpu-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms")
	b.ReportMetric(float64(s[0].Value.Uint64()), "heap-objects")
	b.ReportMetric(float64(s[1].Value.Uint64())/1e6, "scan-MB")
	b.ReportMetric(float64(s[2].Value.Uint64())/1e6, "live-MB")
	b.ReportMetric(0, "ns/op")
}

const (
	// tradedMarkets is the number of markets the accounts trade on in
	// gc-traded, as many as marketd-load's runs open.
	tradedMarkets = 8
	// tradedParallel is the number of goroutines that trade in
	// gc-traded: enough for the log's group commit to gather large
	// batches.
	tradedParallel = 128
	// tradedSeed seeds the order in which the accounts trade.
	tradedSeed = 14
)

// traded makes tradeEveryAccount's trades once per test binary: the
// benchmark function may run more than once.
var traded struct {
	once sync.Once
	n    int
	err  error
}

// tradeEveryAccount makes one trade for each of the recovered accounts,
// through an engine on the state, as marketd's trades are made: a buy of
// one share, yes or no, on one of tradedMarkets markets, durable in the
// log. The accounts trade in a shuffled order, as the load generator's
// bots do, so that what each trade allocates is not laid out in the
// accounts' order. Each account then holds a position, a fill and a
// second ledger entry, as those that traded do in the 1,000,000-account
// row (docs/PERFORMANCE.md, "The 1,000,000-account row's slowest
// seconds"), where a minute reaches fewer of them. It returns the number
// of accounts that traded.
func tradeEveryAccount(b *testing.B, st *core.State, log *wal.Log) int {
	traded.once.Do(func() { traded.n, traded.err = makeTrades(st, log) })
	if traded.err != nil {
		b.Fatal(traded.err)
	}
	return traded.n
}

// makeTrades is tradeEveryAccount's work: it returns the accounts that
// traded.
func makeTrades(st *core.State, log *wal.Log) (int, error) {
	ctx := context.Background()
	e := core.NewEngine(st, log, core.Config{CloseInterval: -1})
	defer e.Close()
	admin, err := e.CreateAccount(ctx, core.NewAccount{Name: "admin", Role: core.RoleAdmin})
	if err != nil {
		return 0, err
	}
	var ms [tradedMarkets]uuid.UUID
	for i := range ms {
		v, err := e.CreateMarket(ctx, core.NewMarket{Creator: admin.ID, Title: fmt.Sprint("m", i), Category: "bench",
			ClosesAt: time.Now().Add(24 * time.Hour), Liquidity: money.Units(1_000_000)})
		if err != nil {
			return 0, err
		}
		ms[i] = v.ID
	}
	order := rand.New(rand.NewPCG(tradedSeed, tradedSeed)).Perm(heapAccounts)
	var next atomic.Int64
	errs := make([]error, tradedParallel)
	var wg sync.WaitGroup
	for g := range tradedParallel {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(order) {
					return
				}
				name := populate.AccountName(order[i])
				a, ok := e.AccountByName(name)
				if !ok {
					errs[g] = fmt.Errorf("account %s not found", name)
					next.Store(int64(len(order)))
					return
				}
				req := core.TradeRequest{Account: a.ID, Market: ms[i%tradedMarkets], Side: core.Side(i / tradedMarkets % 2), Shares: money.Units(1)}
				if _, err := e.Trade(ctx, req); err != nil {
					errs[g] = fmt.Errorf("trade of %s: %w", name, err)
					next.Store(int64(len(order)))
					return
				}
			}
		})
	}
	wg.Wait()
	return len(order), errors.Join(errs...)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if million.log != nil {
		million.log.Close()
	}
	if million.dir != "" {
		os.RemoveAll(million.dir)
	}
	os.Exit(code)
}
