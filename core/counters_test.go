package core_test

import (
	"testing"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// TestCountersCountEveryTrade: every applied trade is counted by side and
// type, the account's first in the market and its later ones alike, and a
// refused one is not.
func TestCountersCountEveryTrade(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 100_000)
	bob := h.account("bob", core.RoleSpeculator, 100_000)
	mkt := h.market("m", 0, 1000)
	var volume money.Amount
	for _, tc := range []struct {
		name string
		acct string
		side core.Side
		sell bool
	}{
		{"alice's first buy", "alice", core.Yes, false},
		{"alice buys again", "alice", core.Yes, false},
		{"alice buys the other side", "alice", core.No, false},
		{"alice sells", "alice", core.Yes, true},
		{"bob's first buy", "bob", core.No, false},
	} {
		acct := map[string]uuid.UUID{"alice": alice, "bob": bob}[tc.acct]
		res, err := h.e.Trade(h.ctx, core.TradeRequest{Account: acct, Market: mkt, Side: tc.side, Sell: tc.sell, Shares: money.Units(1)})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		volume += res.Cost
	}
	if _, err := h.sell(bob, mkt, core.Yes, money.Units(1)); err == nil {
		t.Fatal("bob sold shares he does not hold")
	}
	var want core.Counters
	want.Trades[money.KP][core.Yes] = [2]uint64{2, 1}
	want.Trades[money.KP][core.No] = [2]uint64{2, 0}
	want.Volume[money.KP] = volume
	got := h.e.Counters()
	if got.Trades != want.Trades || got.Volume != want.Volume {
		t.Fatalf("Counters() trades %v, volume %v; want %v, %v", got.Trades, got.Volume, want.Trades, want.Volume)
	}
}
