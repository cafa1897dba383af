package core_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/cputime"
	"marketd/internal/fstype"
	"marketd/internal/memjournal"
	"marketd/wal"
)

// benchEngine runs an engine on a real log in a temporary directory, with
// markets and one funded account per trading goroutine.
type benchEngine struct {
	e       *core.Engine
	log     *wal.Log
	markets []uuid.UUID
	accts   []uuid.UUID
	next    atomic.Int64 // hands each goroutine its own account
}

// segmentBytes is the log segment size the benchmarks use.
var segmentBytes = wal.DefaultSegmentSizeBytes

type journalKind int

const (
	noLog journalKind = iota
	logNoFsync
	logFsync
)

func newBenchEngine(b *testing.B, kind journalKind, markets, accounts int) *benchEngine {
	b.Helper()
	be := &benchEngine{}
	var j core.Journal = &memjournal.Null{}
	if kind != noLog {
		log, err := wal.Open(fstype.DiskTempDir(b), wal.Options{NoFsync: kind == logNoFsync, SegmentSizeBytes: segmentBytes, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		log.Start()
		be.log, j = log, log
	}
	be.e = core.NewEngine(core.NewState(), j, core.Config{CloseInterval: -1})
	b.Cleanup(func() {
		be.e.Close()
		if be.log != nil {
			if err := be.log.Close(); err != nil {
				b.Error(err)
			}
		}
	})
	ctx := context.Background()
	admin, err := be.e.CreateAccount(ctx, core.NewAccount{Name: "admin", Role: core.RoleAdmin})
	if err != nil {
		b.Fatal(err)
	}
	for i := range markets {
		v, err := be.e.CreateMarket(ctx, core.NewMarket{Creator: admin.ID, Title: fmt.Sprint("m", i), Category: "bench",
			ClosesAt: time.Now().Add(time.Hour), Liquidity: money.Units(1_000_000)})
		if err != nil {
			b.Fatal(err)
		}
		be.markets = append(be.markets, v.ID)
	}
	for i := range accounts {
		// A trade of one share moves about half a unit; the bonuses of all
		// 1,024 accounts must stay under core.MaxSupply together.
		v, err := be.e.CreateAccount(ctx, core.NewAccount{Name: fmt.Sprint("bot", i), Bonus: money.Units(100_000_000)})
		if err != nil {
			b.Fatal(err)
		}
		be.accts = append(be.accts, v.ID)
	}
	return be
}

// run trades from goroutines (GOMAXPROCS x parallelism of them), each on
// its own account, alternating a buy and the sell of that share on one
// market so that the state stays the same size, then moving to the next.
func (be *benchEngine) run(b *testing.B, parallelism int) {
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(parallelism)
	cpu0, hasCPU := cputime.Process()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		g := int(be.next.Add(1) - 1)
		acct := be.accts[g%len(be.accts)]
		req := core.TradeRequest{Account: acct, Side: core.Side(g % 2), Shares: money.Units(1)}
		for i := 0; pb.Next(); i++ {
			// A buy, then the sell of the same share on the same market.
			req.Market = be.markets[(g+i/2)%len(be.markets)]
			req.Sell = i%2 == 1
			if _, err := be.e.Trade(ctx, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "trades/s")
	// The process's CPU time per trade, and how many of the cores it kept
	// busy on average: a pipeline that waits shows fewer than GOMAXPROCS.
	if cpu1, ok := cputime.Process(); hasCPU && ok {
		cpu := cpu1 - cpu0
		b.ReportMetric(float64(cpu.Nanoseconds())/1000/float64(b.N), "cpu-us/trade")
		b.ReportMetric(cpu.Seconds()/b.Elapsed().Seconds(), "cores-used")
	}
	if be.log != nil {
		st := be.log.Stats()
		b.ReportMetric(float64(st.Records)/float64(max(st.Batches, 1)), "records/commit")
		if st.Fsyncs > 0 {
			b.ReportMetric(st.FsyncTotal.Seconds()*1000/float64(st.Fsyncs), "fsync-ms")
		}
	}
}

// BenchmarkTradeNoLog: trades through the actors with a journal that
// acknowledges at once, 64 markets, 64 goroutines: the ceiling of the
// actor pipeline, the baseline of the log's cost.
func BenchmarkTradeNoLog(b *testing.B) {
	be := newBenchEngine(b, noLog, 64, 64)
	be.run(b, 64/maxProcs())
}

// BenchmarkTradeFsyncOff: trades through the actors and the log with fsync
// off, 64 markets, 64 goroutines. Target: 1,000,000 trades/s on 2 cores.
func BenchmarkTradeFsyncOff(b *testing.B) {
	be := newBenchEngine(b, logNoFsync, 64, 64)
	be.run(b, 64/maxProcs())
}

// BenchmarkTradeDurable: fsync on with group commit, 1,024 goroutines so
// that batches can fill, 64 markets. Target: 200,000 trades/s.
func BenchmarkTradeDurable(b *testing.B) {
	be := newBenchEngine(b, logFsync, 64, 1024)
	be.run(b, 1024/maxProcs())
}

// BenchmarkTradeDurableOneMarket: as BenchmarkTradeDurable with every trade
// on one market, the hot-market case.
func BenchmarkTradeDurableOneMarket(b *testing.B) {
	be := newBenchEngine(b, logFsync, 1, 1024)
	be.run(b, 1024/maxProcs())
}

func maxProcs() int { return runtime.GOMAXPROCS(0) }
