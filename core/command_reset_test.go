package core_test

import (
	"testing"

	"marketd/core"
	"marketd/core/money"
)

// TestTradeCommandResetClearsAll: a trade's command is cleared part by
// part when it goes back to the pool (command.reset), which holds only if
// a trade, answered or refused, idempotent or not, writes nothing of its
// command outside that part; and after reset the command is zero but for
// its answer channel.
func TestTradeCommandResetClearsAll(t *testing.T) {
	h := newHarness(t)
	acct := h.account("bot", core.RoleSpeculator, 1_000)
	mkt := h.market("m", 0.05, 1_000)
	answer := func(*core.TradeResult) []byte { return []byte(`{}`) }
	for _, tc := range []struct {
		name    string
		req     core.TradeRequest
		refused bool
	}{
		{"buy", core.TradeRequest{Side: core.Yes, Shares: money.Units(2), Reasoning: "why"}, false},
		{"sell", core.TradeRequest{Side: core.Yes, Sell: true, Shares: money.Units(1)}, false},
		{"idempotent buy", core.TradeRequest{Side: core.No, Shares: money.Units(1),
			Idem: core.Idempotent{Key: "k-1", Fingerprint: [32]byte{1}}, Answer: answer}, false},
		{"idempotent repeat", core.TradeRequest{Side: core.No, Shares: money.Units(1),
			Idem: core.Idempotent{Key: "k-1", Fingerprint: [32]byte{1}}, Answer: answer}, true},
		{"refused sell", core.TradeRequest{Side: core.No, Sell: true, Shares: money.Units(5)}, true},
		{"refused by its limit", core.TradeRequest{Side: core.Yes, Shares: money.Units(1), HasLimit: true, Limit: 1}, true},
		{"invalid", core.TradeRequest{Side: core.Yes}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Account, req.Market, req.Currency = acct, mkt, money.KP
			set, cleared, err := core.TradeCommandLeftovers(h.ctx, h.e, req)
			if (err != nil) != tc.refused {
				t.Fatalf("%+v: error %v, want refused %v", req, err, tc.refused)
			}
			if len(set) != 0 || len(cleared) != 0 {
				t.Fatalf("%+v: fields set outside a trade's part %v, not zero after reset %v; want none", req, set, cleared)
			}
		})
	}
	h.check()
}
