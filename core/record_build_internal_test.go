package core

import (
	"reflect"
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// TestScratchResetAfterBookChange: after a book change of the trader's
// account alone (bookOnly, which changeBook sets), reset empties only the
// parts that change set; the next record built in the scratch, of every
// shape below, must equal the one built after a full reset.
func TestScratchResetAfterBookChange(t *testing.T) {
	m := NewState().newMarket(uuid.New())
	trader, house := testAccount(), testAccount()
	trader.lsn, house.lsn = 7, 9
	ref := uuid.New()
	// trade builds a trade's record of the trader alone, part by part as
	// buildBookChange does.
	trade := func(sc *scratch, now int64) {
		sc.reset(KindTrade, now)
		sc.market(m)
		sc.books[0] = Book{Currency: money.KP, Seq: uint64(now)}
		sc.rec.Markets[0].Books = sc.books[:1]
		sc.poss[0] = Position{Market: m.id, Currency: money.KP}
		ac := sc.account(trader, trader.id)
		sc.credit(ac, money.KP, TxTradeBuy, -5, 95, ref, now)
		ac.Positions = sc.poss[:1]
		sc.trds[0] = TradeSummary{Market: m.id, Shares: 1, Time: now}
		ac.Trades = sc.trds[:1]
	}
	for _, c := range []struct {
		name string
		next func(sc *scratch)
	}{
		{"a trade", func(sc *scratch) { trade(sc, 2) }},
		{"a merge", func(sc *scratch) {
			sc.reset(KindMerge, 2)
			sc.market(m)
			sc.rec.Markets[0].Books = sc.books[:1]
			ac := sc.account(trader, trader.id)
			sc.credit(ac, money.KP, TxMerge, 3, 98, ref, 2)
			ac.Positions = sc.poss[:1]
		}},
		{"a first trade the house funds", func(sc *scratch) {
			sc.reset(KindTrade, 2)
			sc.market(m)
			hc := sc.account(house, house.id)
			sc.credit(hc, money.KP, TxMarketSubsidy, -9, 1, m.id, 2)
			ac := sc.account(trader, trader.id)
			sc.credit(ac, money.KP, TxTradeBuy, -5, 95, ref, 2)
			ac.Positions = sc.poss[1:2]
		}},
		{"a change with an info and notes read", func(sc *scratch) {
			sc.reset(KindMarketClosed, 2)
			ac := sc.account(trader, trader.id)
			ac.Info = &AccountInfo{Name: "trader"}
			ac.NotesRead = []uint64{1}
		}},
		{"no account", func(sc *scratch) {
			sc.reset(KindMarketClosed, 2)
			sc.market(m)
		}},
	} {
		fast, full := new(scratch), new(scratch)
		trade(fast, 1)
		trade(full, 1)
		fast.bookOnly = true
		c.next(fast)
		c.next(full)
		if !reflect.DeepEqual(fast.rec, full.rec) || fast.entries != full.entries ||
			!reflect.DeepEqual(fast.pending.accts, full.pending.accts) {
			t.Fatalf("%s after a trade: record %+v after the trade's reset, %+v after a full one", c.name, fast.rec, full.rec)
		}
	}
}
