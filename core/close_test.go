package core_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/memjournal"
)

// TestCloseWaitsForBookChangesInFlight: trades, splits and merges are
// admitted by their market rather than the engine's gate (enterMarket), and
// Close still waits for each one in flight, here until the journal makes
// it durable; one that comes after Close is refused with ErrClosed.
func TestCloseWaitsForBookChangesInFlight(t *testing.T) {
	for _, c := range []struct {
		name    string
		markets int
	}{
		{"one market", 1},
		{"three markets", 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			var markets []uuid.UUID
			for i := range c.markets {
				markets = append(markets, h.market(fmt.Sprint("market ", i), 0, 1000))
			}
			const traders = 12
			outcomes := make(chan error, traders)
			var accts [traders]uuid.UUID
			for i := range accts {
				accts[i] = h.account(fmt.Sprint("trader", i), core.RoleSpeculator, 1000)
			}
			h.j.Hold()
			for i, acct := range accts {
				go func() {
					req := core.TradeRequest{Account: acct, Market: markets[i%len(markets)], Side: core.Yes, Shares: money.Units(1)}
					if i%2 == 1 {
						_, err := h.e.SplitMerge(h.ctx, core.SplitRequest{Account: acct, Market: req.Market, Amount: money.Units(1)})
						outcomes <- err
						return
					}
					_, err := h.e.Trade(h.ctx, req)
					outcomes <- err
				}()
			}
			h.j.WaitUntil(func(s memjournal.State) bool { return s.Unacked == traders })
			closed := make(chan struct{})
			go func() { h.e.Close(); close(closed) }()
			select {
			case <-closed:
				t.Fatal("Close returned with every trade unanswered")
			case err := <-outcomes:
				t.Fatalf("a trade was answered before its record was durable: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
			h.j.Release()
			<-closed
			for range traders {
				if err := <-outcomes; err != nil {
					t.Errorf("a trade in flight at Close: %v", err)
				}
			}
			_, err := h.buy(h.admin, markets[0], core.Yes, money.Units(1))
			if !errors.Is(err, core.ErrClosed) {
				t.Errorf("a trade after Close: %v, want ErrClosed", err)
			}
		})
	}
}
