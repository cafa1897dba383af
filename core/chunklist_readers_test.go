package core_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// TestLedgerAndFillsReadWhileTrading: GET /api/points and GET /api/trades
// read an account's ledger and fills (chunk lists past their first 256
// entries) without the account's lock while its market goes on trading.
// Every page read must be a chain: each entry's balance_after is the one
// after it plus its amount, and the fills are newest first with distinct
// IDs; run with -race, a reader that sees an entry being written fails.
func TestLedgerAndFillsReadWhileTrading(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 1_000_000)
	mkt := h.market("m", 0, 1000)
	const trades = 700 // past two chunks of 256
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	fail := func(s string) {
		select {
		case errs <- s:
		default:
		}
	}
	wg.Go(func() {
		for !stop.Load() {
			page, total, ok := h.e.Ledger(alice, money.KP, 0, 300)
			if !ok || len(page) > total {
				fail("ledger page longer than its total")
				return
			}
			for i := 0; i+1 < len(page); i++ {
				if page[i].BalanceAfter != page[i+1].BalanceAfter+page[i].Amount {
					fail("ledger page is not a chain")
					return
				}
			}
		}
	})
	wg.Go(func() {
		for !stop.Load() {
			fills, total, err := h.e.Fills(h.ctx, alice, uuid.Nil, 0, 300)
			if err != nil || len(fills) > total {
				fail("fills page longer than its total")
				return
			}
			seen := make(map[uuid.UUID]bool, len(fills))
			for i, f := range fills {
				if seen[f.ID] || f.ID == uuid.Nil || (i > 0 && f.Time > fills[i-1].Time) {
					fail("fills page repeats, lacks or misorders a trade")
					return
				}
				seen[f.ID] = true
			}
		}
	})
	for i := range trades {
		if _, err := h.e.Trade(h.ctx, core.TradeRequest{Account: alice, Market: mkt, Side: core.Side(i % 2), Shares: money.Units(1)}); err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("trade %d: %v", i, err)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if _, total, _ := h.e.Fills(h.ctx, alice, uuid.Nil, 0, 1); total != trades {
		t.Errorf("fills total %d, want %d", total, trades)
	}
}
