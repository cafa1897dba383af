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

// Counters count the records of splits and merges by kind, apart from the
// trades' (whose count is their records'), and not a refused merge's.
func TestCountersCountSplitsAndMerges(t *testing.T) {
	h := newHarness(t)
	carol := h.account("carol", core.RoleSpeculator, 1000)
	mkt := h.market("split", 0, 1000)
	mustTrade(t)(h.buy(carol, mkt, core.Yes, money.Units(5)))
	for _, r := range []core.SplitRequest{
		{Account: carol, Market: mkt, Amount: money.Units(20)},
		{Account: carol, Market: mkt, Amount: money.Units(10)},
		{Account: carol, Market: mkt, Amount: money.Units(5), Merge: true},
	} {
		if _, err := h.e.SplitMerge(h.ctx, r); err != nil {
			t.Fatalf("split-merge %+v: %v", r, err)
		}
	}
	if _, err := h.e.SplitMerge(h.ctx, core.SplitRequest{Account: carol, Market: mkt, Amount: money.Units(1_000_000), Merge: true}); err == nil {
		t.Fatal("merging shares not held was accepted")
	}
	got := h.e.Counters()
	for _, w := range []struct {
		kind core.Kind
		n    uint64
	}{{core.KindTrade, 1}, {core.KindSplit, 2}, {core.KindMerge, 1}} {
		if g := got.Records[w.kind]; g != w.n {
			t.Errorf("records[%v] = %d, want %d", w.kind, g, w.n)
		}
	}
}
