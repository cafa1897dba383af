package core_test

import (
	"errors"
	"fmt"
	"testing"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/memjournal"
)

// TestMintPastMaxSupplyRefused mints KP by signup bonuses up to MaxSupply:
// the next bonus is refused with ErrTotalLimit and changes nothing. Before
// this bound, minting went on until the minted total wrapped.
func TestMintPastMaxSupplyRefused(t *testing.T) {
	h := newHarness(t)
	const bonusUnits = 1_000_000_000 // the largest bonus core takes
	for i := range 1000 {
		h.account(fmt.Sprintf("rich%d", i), core.RoleSpeculator, bonusUnits)
	}
	minted, _ := h.e.Supply()
	if minted[money.KP] != money.Units(1_000_000_000_000) {
		t.Fatalf("minted %s after 1000 bonuses of 1e9", minted[money.KP])
	}
	before := h.e.State().Canonical()
	_, err := h.e.CreateAccount(h.ctx, core.NewAccount{Name: "one_more", Role: core.RoleSpeculator,
		Bonus: money.Units(1), PasswordHash: []byte("hash")})
	if !errors.Is(err, core.ErrTotalLimit) {
		t.Fatalf("a bonus past MaxSupply: %v, want ErrTotalLimit", err)
	}
	requireEqualRecords(t, h.e.State().Canonical(), before)
	h.check()
}

// TestVolumeSaturates: a market's volume is a statistic; at its bound it
// saturates and the trade goes through. Before, the volume's overflow
// refused every further trade of the market with an internal error.
func TestVolumeSaturates(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 1000)
	mkt := h.market("m", 0, 1000)
	mustTrade(t)(h.buy(alice, mkt, core.Yes, money.Units(1)))
	h.e.Close()
	st := h.replayed()
	recs := h.j.Records(t)
	v, _ := h.e.Market(mkt)
	book := v.Books[money.KP]
	book.Volume = core.MaxStatistic - 10
	if err := st.Apply(uint64(len(recs)+1), &core.Record{Kind: core.KindTrade, Time: 1,
		Markets: []core.MarketChange{{ID: mkt, Prev: v.LSN, Books: []core.Book{book}}}}); err != nil {
		t.Fatal(err)
	}
	e := core.NewEngine(st, memjournal.NewAfter(uint64(len(recs)+1)), core.Config{Now: h.clock.Now, CloseInterval: -1, UsageFlushInterval: -1})
	defer e.Close()
	if _, err := e.Trade(h.ctx, core.TradeRequest{Account: alice, Market: mkt, Side: core.No, Shares: money.Units(1)}); err != nil {
		t.Fatalf("trade at the volume's bound: %v", err)
	}
	if after, _ := e.Market(mkt); after.Books[money.KP].Volume != core.MaxStatistic {
		t.Fatalf("volume %d, want saturated at %d", after.Books[money.KP].Volume, core.MaxStatistic)
	}
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
}
