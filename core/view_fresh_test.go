package core_test

import (
	"sync"
	"testing"

	"marketd/core"
	"marketd/core/money"
)

// TestReadAfterTradeSeesIt checks read-your-writes with views made on
// demand: once a trade is answered, the market's view, its quote book and
// the markets' list all hold it, while other traders keep the market's
// goroutine busy.
func TestReadAfterTradeSeesIt(t *testing.T) {
	h := newHarness(t)
	mkt := h.market("read after trade", 0.01, 1000)
	const traders, trades = 8, 50
	var wg sync.WaitGroup
	for g := range traders {
		acct := h.account("trader"+string(rune('a'+g)), core.RoleSpeculator, 1000)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range trades {
				side := core.Side(i % 2)
				res, err := h.buy(acct, mkt, side, money.Units(1))
				if err != nil {
					t.Errorf("trader %d trade %d: %v", g, i, err)
					return
				}
				v, ok := h.e.Market(mkt)
				if !ok {
					t.Errorf("market %s not found", mkt)
					return
				}
				if got := v.Books[res.Currency].MarketSeq(); got < res.MarketSeq {
					t.Errorf("trader %d trade %d: view at market_seq %d, trade answered at %d", g, i, got, res.MarketSeq)
				}
				for _, mv := range h.e.Markets() {
					if mv.ID == mkt && mv.Books[res.Currency].MarketSeq() < res.MarketSeq {
						t.Errorf("trader %d trade %d: Markets at market_seq %d, trade answered at %d", g, i, mv.Books[res.Currency].MarketSeq(), res.MarketSeq)
					}
				}
			}
		}()
	}
	wg.Wait()
	h.check()
	v, _ := h.e.Market(mkt)
	if got := v.Books[money.USDC].Trades + v.Books[money.KP].Trades; got != traders*trades {
		t.Errorf("view counts %d trades, want %d", got, traders*trades)
	}
}
