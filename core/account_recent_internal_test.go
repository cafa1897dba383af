package core

import (
	"fmt"
	"testing"

	"github.com/google/uuid"
)

// TestRecentTradesAreTheLastFillsWithTheirReasoning applies trades one at
// a time, some with a reasoning and most without (the first with one
// after many without, so that the reasoning's ring starts late), and
// after each compares the recent trades with the last RecentTradesKept
// applied, reasoning included, and the fills with every trade applied,
// reasoning left out; then the same of an account loaded from the
// account's image.
func TestRecentTradesAreTheLastFillsWithTheirReasoning(t *testing.T) {
	a := testAccount()
	a.id = uuid.New()
	var all []TradeSummary
	for i := range 3*RecentTradesKept + 7 {
		tr := TradeSummary{ID: uuid.New(), Market: uuid.New(), Shares: 1, Time: int64(i)}
		if i >= 25 && i%3 == 0 {
			tr.Reasoning = fmt.Sprint("why ", i)
		}
		all = append(all, tr)
		a.applyLocked(uint64(i+1), &AccountChange{ID: a.id, Prev: uint64(i), Trades: []TradeSummary{tr}}, IdempotencyLimits{})
		want := all[max(0, len(all)-RecentTradesKept):]
		if got := a.recentTrades(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after trade %d: recent trades\n got %+v\nwant %+v", i, got, want)
		}
		fills := listValues(&a.refs().fills)
		for j, f := range fills {
			w := all[j]
			w.Reasoning = ""
			if f != w {
				t.Fatalf("after trade %d: fill %d is %+v, want %+v", i, j, f, w)
			}
		}
	}
	var b imageBuffers
	a.mu.Lock()
	ch, pre := a.imageLocked(&b)
	a.mu.Unlock()
	b.addTrades(&ch, &pre)
	b.addLedger(&ch, pre.ledger)
	if len(ch.Trades) != len(all) {
		t.Fatalf("image has %d trades, want %d", len(ch.Trades), len(all))
	}
	loaded := testAccount()
	loaded.id = a.id
	loaded.applyLocked(a.lsn, &AccountChange{ID: a.id, Trades: ch.Trades}, IdempotencyLimits{})
	if got, want := loaded.recentTrades(), a.recentTrades(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("loaded recent trades\n got %+v\nwant %+v", got, want)
	}
}
