package core_test

import (
	"testing"
	"time"

	"marketd/core"
	"marketd/core/money"
)

// TestTradeWaitsForTheMarketsTurn: a trade runs only while it holds its
// market's turn, whoever runs it (the caller on an idle market, or the
// market's goroutine): while another holds the turn, the trade neither
// runs nor is answered; once the turn is let go it runs, and the state
// stays consistent.
func TestTradeWaitsForTheMarketsTurn(t *testing.T) {
	h := newHarness(t)
	acct := h.account("bob", core.RoleSpeculator, 1000)
	mkt := h.market("m", 0.05, 100)
	buy := func(done chan<- error) {
		_, err := h.e.Trade(h.ctx, core.TradeRequest{Account: acct, Market: mkt, Side: core.Yes, Shares: money.Units(1)})
		done <- err
	}
	// On an idle market the turn is free: the caller runs the trade.
	first := make(chan error, 1)
	buy(first)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	records := len(h.j.Records(t))

	release := core.HoldTurn(h.e, mkt)
	held := make(chan error, 2)
	go buy(held)
	go buy(held)
	select {
	case err := <-held:
		t.Fatalf("a trade was answered (%v) while another held its market's turn", err)
	case <-time.After(100 * time.Millisecond):
	}
	if n := len(h.j.Records(t)); n != records {
		t.Fatalf("%d records logged while the turn was held, want none", n-records)
	}
	release()
	for range 2 {
		if err := <-held; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(h.j.Records(t)); n != records+2 {
		t.Fatalf("%d records after the turn was let go, want 2", n-records)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}
