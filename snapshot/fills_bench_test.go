package snapshot_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/cputime"
	"marketd/snapshot"
)

// fillsNode is the open loop's state after about a minute at R: 128
// accounts holding about 4,000 fills each in 8 markets, built once per
// benchmark binary on a log with fsync off.
var (
	fillsOnce sync.Once
	fills     *fillsState
)

type fillsState struct {
	n       *node
	markets []uuid.UUID
	traders []uuid.UUID
}

const (
	fillsAccounts = 128
	fillsPerAcct  = 4000
)

func getFills(b *testing.B) *fillsState {
	fillsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "marketd-bench-")
		if err != nil {
			b.Fatal(err)
		}
		bigDirs = append(bigDirs, dir)
		n := start(b, dir, newClock(time.Now()))
		ctx := context.Background()
		admin, err := n.e.CreateAccount(ctx, core.NewAccount{Name: "admin", Role: core.RoleAdmin})
		if err != nil {
			b.Fatal(err)
		}
		fs := &fillsState{n: n}
		for i := range 8 {
			v, err := n.e.CreateMarket(ctx, core.NewMarket{Creator: admin.ID, Title: fmt.Sprint("m", i), Category: "c",
				ClosesAt: time.Now().Add(24 * time.Hour), Liquidity: money.Units(1_000_000)})
			if err != nil {
				b.Fatal(err)
			}
			fs.markets = append(fs.markets, v.ID)
		}
		for i := range fillsAccounts {
			v, err := n.e.CreateAccount(ctx, core.NewAccount{Name: fmt.Sprintf("t%03d", i), Bonus: money.Units(1_000_000)})
			if err != nil {
				b.Fatal(err)
			}
			fs.traders = append(fs.traders, v.ID)
		}
		var wg sync.WaitGroup
		for g, id := range fs.traders {
			wg.Go(func() {
				for i := range fillsPerAcct {
					req := core.TradeRequest{Account: id, Market: fs.markets[(g+i/2)%len(fs.markets)], Side: core.Yes,
						Shares: money.Units(1), Sell: i%2 == 1}
					if _, err := n.e.Trade(ctx, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		fills = fs
	})
	return fills
}

// BenchmarkSnapshotFills takes a snapshot of the open loop's state (128
// accounts of about 4,000 fills each) as Run takes it, unpaced, with
// nothing else running, and reports its CPU (cpu-ms, the process's), its
// duration, its size and chunks, and the longest work between two yields
// of the processor (longest-work-ms): how long the snapshot keeps one of
// the two processors from the market actors, the log's writer and the
// requests (docs/PERFORMANCE.md, "The snapshot's second").
func BenchmarkSnapshotFills(b *testing.B) {
	fs := getFills(b)
	m := snapshot.NewManager(fs.n.e.State(), fs.n.log, snapshot.Options{Dir: snapDir(fs.n.dir), Logger: quiet}, nil)
	ctx := context.Background()
	req := core.TradeRequest{Account: fs.traders[0], Market: fs.markets[0], Side: core.Yes, Shares: money.Units(1)}
	var cpu, longest, took time.Duration
	var chunks, size int64
	for i := range b.N {
		b.StopTimer()
		req.Sell = i%2 == 1
		if _, err := fs.n.e.Trade(ctx, req); err != nil { // something new to take
			b.Fatal(err)
		}
		b.StartTimer()
		c0, _ := cputime.Process()
		t0 := time.Now()
		h, l, err := m.TakeMeasured(ctx, 1)
		if err != nil {
			b.Fatal(err)
		}
		took += time.Since(t0)
		c1, _ := cputime.Process()
		cpu += c1 - c0
		longest = max(longest, l)
		chunks = int64(h.Chunks)
		size = m.Stats().LastSizeBytes
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms")
	b.ReportMetric(float64(took.Microseconds())/1000/float64(b.N), "snapshot-ms")
	b.ReportMetric(float64(longest.Microseconds())/1000, "longest-work-ms")
	b.ReportMetric(float64(chunks), "chunks")
	b.ReportMetric(float64(size)/1e6, "MB")
}
