package record

import (
	"fmt"
	"reflect"
	"testing"

	"marketd/core"
	"marketd/core/money"
	"marketd/wal/record/recordgen"
)

// TestDecodeAccountBlocksPerRecord: the single items of a record's account
// changes (a balance, a ledger entry, a position, a trade each) take one
// allocation for the whole record, not one per account change, as a
// snapshot's chunk of thousands of accounts decodes; and each change still
// decodes to its own values.
func TestDecodeAccountBlocksPerRecord(t *testing.T) {
	allocs := make(map[int]float64)
	for _, n := range []int{2, 3, 64, 1000} {
		t.Run(fmt.Sprint(n, " accounts"), func(t *testing.T) {
			rec := recordgen.Trade(7)
			one := rec.Accounts[0]
			one.Trades[0].Reasoning = "" // a string of its own would be an allocation per account
			rec.Accounts = nil
			for i := range n {
				ch := one
				ch.ID[0], ch.ID[1] = byte(i), byte(i>>8)
				ch.Balances = []core.Balance{{Currency: one.Balances[0].Currency, After: one.Balances[0].After + money.Amount(i)}}
				l := one.Ledger[0]
				l.Index = uint32(i)
				ch.Ledger = []core.LedgerEntry{l}
				p := one.Positions[0]
				p.PaidIn += money.Amount(i)
				ch.Positions = []core.Position{p}
				tr := one.Trades[0]
				tr.Shares += money.Amount(i)
				ch.Trades = []core.TradeSummary{tr}
				rec.Accounts = append(rec.Accounts, ch)
			}
			b := Append(nil, rec)
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, rec) {
				t.Fatalf("round trip differs\ngot:  %+v\nwant: %+v", got, rec)
			}
			allocs[n] = testing.AllocsPerRun(20, func() {
				if _, err := Decode(b); err != nil {
					t.Fatal(err)
				}
			})
			if a, a2 := allocs[n], allocs[2]; a != a2 {
				t.Fatalf("decoding %d account changes took %.0f allocations, %d took %.0f; want the same", n, a, 2, a2)
			}
		})
	}
}
