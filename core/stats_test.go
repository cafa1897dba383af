package core_test

import (
	"sync"
	"testing"
	"time"

	"marketd/core"
	"marketd/core/money"
)

// Stats counts accounts without the house, markets by the status they have
// now, every trade and its cost, what unresolved markets could pay out, and
// the keys and sessions usable now.
func TestStats(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 1000)
	bob := h.account("bob", core.RoleSpeculator, 1000)
	if got := h.e.Stats(); got != (core.Stats{Accounts: 3}) {
		t.Fatalf("Stats of accounts alone = %+v", got)
	}
	active := h.market("active", 0, 1000)
	resolved := h.market("resolved", 0, 1000)
	h.market("untraded", 0, 1000)
	v, err := h.e.CreateMarket(h.ctx, core.NewMarket{Creator: h.admin, Title: "closing", Category: "test",
		ClosesAt: h.clock.Now().Add(time.Hour), Liquidity: money.Units(1000)})
	if err != nil {
		t.Fatal(err)
	}
	closing := v.ID

	var volume money.Amount
	trade := func(r core.TradeResult, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		volume += r.Cost
	}
	trade(h.buy(bob, active, core.Yes, money.Units(100)))
	trade(h.sell(bob, active, core.Yes, money.Units(40)))
	if _, err := h.e.SplitMerge(h.ctx, core.SplitRequest{Account: alice, Market: active, Amount: money.Units(30)}); err != nil {
		t.Fatal(err)
	}
	trade(h.buy(alice, resolved, core.No, money.Units(50)))
	if _, err := h.e.Settle(h.ctx, core.SettleRequest{Market: resolved, Outcome: core.Yes}); err != nil {
		t.Fatal(err)
	}
	trade(h.buy(bob, closing, core.Yes, money.Units(10)))

	now := h.clock.Now()
	h.newKey(alice, 1, 0)
	revoked := h.newKey(alice, 2, 0)
	if _, err := h.e.RevokeKey(h.ctx, alice, revoked.ID); err != nil {
		t.Fatal(err)
	}
	h.newKey(alice, 3, time.Hour) // expired below
	h.newKey(bob, 4, 48*time.Hour)
	sessions := []core.Session{
		{Hash: [32]byte{1}, Account: alice, ExpiresAt: now.Add(7 * 24 * time.Hour).UnixNano()},
		{Hash: [32]byte{2}, Account: alice, ExpiresAt: now.Add(7 * 24 * time.Hour).UnixNano()}, // revoked below
		{Hash: [32]byte{3}, Account: bob, ExpiresAt: now.Add(time.Hour).UnixNano()},            // expired below
	}
	for _, s := range sessions {
		if err := h.e.CreateSession(h.ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.e.RevokeSession(h.ctx, sessions[1].Hash); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(2 * time.Hour) // "closing" is past closes_at, not logged closed

	want := core.Stats{Accounts: 3, ActiveKeys: 2, ActiveSessions: 1}
	want.Markets[core.StatusActive] = 2
	want.Markets[core.StatusClosed] = 1
	want.Markets[core.StatusResolved] = 1
	want.Trades[money.KP] = 4
	want.Volume[money.KP] = volume
	// active: yes 100-40 bought + 30 split, no 30 split; closing: yes 10.
	want.OpenInterest[money.KP] = money.Units(90 + 10)
	if got := h.e.Stats(); got != want {
		t.Fatalf("Stats() =\n %+v\nwant\n %+v", got, want)
	}
}

// Stats reads while trades go on, and its trade count only grows.
func TestStatsWhileTrading(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 100_000)
	mkt := h.market("m", 0, 1000)
	const trades = 200
	var wg sync.WaitGroup
	wg.Go(func() {
		for range trades {
			if _, err := h.buy(alice, mkt, core.Yes, money.Units(1)); err != nil {
				t.Errorf("buy: %v", err)
				return
			}
		}
	})
	var last uint64
	for last < trades && !t.Failed() {
		st := h.e.Stats()
		if st.Trades[money.KP] < last {
			t.Fatalf("trades went back from %d to %d", last, st.Trades[money.KP])
		}
		last = st.Trades[money.KP]
	}
	wg.Wait()
	if got := h.e.Stats(); got.Trades[money.KP] != trades || got.OpenInterest[money.KP] != money.Units(trades) {
		t.Fatalf("Stats after %d buys of 1 share = %+v", trades, got)
	}
}
