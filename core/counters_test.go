package core_test

import (
	"testing"

	"marketd/core"
	"marketd/core/money"
)

// Counters count every applied trade by currency, side and type, and its
// record, the second trade of a holder as much as its first, and never a
// refused one.
func TestCountersCountEveryTrade(t *testing.T) {
	h := newHarness(t)
	bob := h.account("bob", core.RoleSpeculator, 1000)
	mkt := h.market("counted", 0, 1000)
	steps := []struct {
		sell bool
		side core.Side
	}{
		{false, core.Yes}, {false, core.Yes}, {false, core.No}, {true, core.Yes}, {true, core.No},
	}
	var want [core.NumSides][2]uint64
	var volume money.Amount
	for _, s := range steps {
		trade := h.buy
		typ := 0
		if s.sell {
			trade, typ = h.sell, 1
		}
		r, err := trade(bob, mkt, s.side, money.Units(5))
		if err != nil {
			t.Fatal(err)
		}
		want[s.side][typ]++
		volume += r.Cost
	}
	if _, err := h.sell(bob, mkt, core.Yes, money.Units(1_000_000)); err == nil {
		t.Fatal("selling shares not held was accepted")
	}
	got := h.e.Counters()
	for side := range core.NumSides {
		for typ := range 2 {
			if g := got.Trades[money.KP][side][typ]; g != want[side][typ] {
				t.Errorf("trades[KP][%v][%d] = %d, want %d", side, typ, g, want[side][typ])
			}
		}
	}
	if got.Volume[money.KP] != volume {
		t.Errorf("volume = %v, want %v", got.Volume[money.KP], volume)
	}
	// Each market counts its trades' records, and Counters adds them up.
	if g := got.Records[core.KindTrade]; g != uint64(len(steps)) {
		t.Errorf("records[KindTrade] = %d, want %d", g, len(steps))
	}
}
