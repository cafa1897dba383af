package core_test

import (
	"testing"

	"marketd/core"
	"marketd/core/money"
)

// TestPooledCommandsAreZero: after trades, refused trades, idempotent and
// batched trades, splits, merges and a settlement, every command back in
// the engine's pool is zero but for its done channel, so that no request,
// result or account of one operation is seen by the next that takes it.
func TestPooledCommandsAreZero(t *testing.T) {
	h := newHarness(t)
	a := h.account("bot", core.RoleSpeculator, 1000)
	mkt := h.market("m", 0.05, 1000)
	other := h.market("other", 0.05, 1000)
	steps := []struct {
		name string
		run  func() error
	}{
		{"buy", func() error { _, err := h.buy(a, mkt, core.Yes, money.Units(3)); return err }},
		{"sell", func() error { _, err := h.sell(a, mkt, core.Yes, money.Units(1)); return err }},
		{"idempotent buy", func() error {
			_, err := h.e.Trade(h.ctx, idemTrade(a, mkt, "k1", "body", money.Units(2)))
			return err
		}},
		{"split", func() error {
			_, err := h.e.SplitMerge(h.ctx, core.SplitRequest{Account: a, Market: mkt, Amount: money.Units(4)})
			return err
		}},
		{"merge", func() error {
			_, err := h.e.SplitMerge(h.ctx, core.SplitRequest{Account: a, Market: mkt, Merge: true, Amount: money.Units(2)})
			return err
		}},
		{"batch", func() error {
			items := []core.BatchTrade{
				{Req: core.TradeRequest{Account: a, Market: mkt, Side: core.No, Shares: money.Units(1)}},
				{Req: core.TradeRequest{Account: a, Market: other, Side: core.Yes, Shares: money.Units(1)}},
			}
			h.e.TradeBatch(h.ctx, items)
			for _, it := range items {
				if it.Err != nil {
					return it.Err
				}
			}
			return nil
		}},
		{"settle", func() error {
			_, err := h.e.Settle(h.ctx, core.SettleRequest{Market: other, Outcome: core.Yes})
			return err
		}},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := core.NonZeroPooledCommand(h.e); got != "" {
			t.Fatalf("after %s, a pooled command has fields set: %s", s.name, got)
		}
	}
	// Refusals: a trade beyond the balance, a sell of shares not held.
	for _, r := range []core.TradeRequest{
		{Account: a, Market: mkt, Side: core.Yes, Shares: money.Units(1_000_000)},
		{Account: a, Market: mkt, Side: core.No, Shares: money.Units(500), Sell: true},
	} {
		if _, err := h.e.Trade(h.ctx, r); err == nil {
			t.Fatalf("trade %+v was not refused", r)
		}
		if got := core.NonZeroPooledCommand(h.e); got != "" {
			t.Fatalf("after a refused trade, a pooled command has fields set: %s", got)
		}
	}
	h.check()
}
