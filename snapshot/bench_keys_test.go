package snapshot_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// BenchmarkRecoverKeys measures recovery from the log alone (decode,
// verify, apply) of 100,000 trade records without Idempotency-Keys, then
// with one on every trade (a 40-byte key and an 80-byte answer, the size
// transport stores for a trade), in records/s: run both in one invocation
// to compare.
func BenchmarkRecoverKeys(b *testing.B) {
	for _, keyed := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "keys"}[keyed]
		b.Run(name, func(b *testing.B) { benchmarkRecoverKeys(b, keyed) })
	}
}

func benchmarkRecoverKeys(b *testing.B, keyed bool) {
	const trades, traders = 100_000, 64
	dir := b.TempDir()
	c := newClock(time.Now())
	st, log, _, err := recoverDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	log.Start()
	e := core.NewEngine(st, log, core.Config{Now: c.Now, CloseInterval: -1,
		Idempotency: core.IdempotencyLimits{Keys: trades}})
	ctx := context.Background()
	admin, _ := e.CreateAccount(ctx, core.NewAccount{Name: "admin", Role: core.RoleAdmin})
	var markets, accounts []uuid.UUID
	for i := range traders {
		v, err := e.CreateMarket(ctx, core.NewMarket{Creator: admin.ID, Title: "m", Category: "c",
			ClosesAt: time.Now().Add(24 * time.Hour), Liquidity: money.Units(1_000_000)})
		if err != nil {
			b.Fatal(err)
		}
		markets = append(markets, v.ID)
		a, err := e.CreateAccount(ctx, core.NewAccount{Name: fmt.Sprintf("trader%d", i), Bonus: money.Units(1_000_000)})
		if err != nil {
			b.Fatal(err)
		}
		accounts = append(accounts, a.ID)
	}
	answer := make([]byte, 80)
	var wg sync.WaitGroup
	for g := range traders {
		wg.Go(func() {
			req := core.TradeRequest{Account: accounts[g], Market: markets[g], Side: core.No, Shares: money.Units(1)}
			for i := range trades / traders {
				req.Sell = i%2 == 1
				if keyed {
					req.Idem = core.Idempotent{Key: fmt.Sprintf("bench-order-%02d-%026d", g, i)}
					req.Answer = func(*core.TradeResult) []byte { return answer }
				}
				if _, err := e.Trade(ctx, req); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	records := log.LastSeq()
	e.Close()
	if err := log.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.ReportAllocs()
	for b.Loop() {
		_, log, _, err := recoverDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := log.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
