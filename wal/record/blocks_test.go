package record

import (
	"fmt"
	"reflect"
	"testing"

	"marketd/core"
	"marketd/core/money"
	"marketd/wal/record/recordgen"
)

// manyAccounts is a record of n account changes, each with one balance,
// ledger entry, position and trade (a trade's, varied by account) and no
// strings, as a snapshot's image of accounts holds.
func manyAccounts(n int) *core.Record {
	rec := recordgen.Trade(7)
	one := rec.Accounts[0]
	one.Trades[0].Reasoning = "" // a string of its own would be an allocation per account
	rec.Kind, rec.Accounts = core.KindImage, nil
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
	return rec
}

// TestDecodeAccountBlocksPerRecord: the single items of a record's account
// changes (a balance, a ledger entry, a position, a trade each) take one
// allocation for the whole record, not one per account change, as a
// snapshot's chunk of thousands of accounts decodes; and each change still
// decodes to its own values.
func TestDecodeAccountBlocksPerRecord(t *testing.T) {
	allocs := make(map[int]float64)
	for _, n := range []int{2, 3, 64, 1000} {
		t.Run(fmt.Sprint(n, " accounts"), func(t *testing.T) {
			rec := manyAccounts(n)
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

// TestDecodeArenaReuses: records decoded one after another into one Arena,
// larger and smaller, with and without infos, decode as Decode does, and a
// record no larger than one before it takes no allocation of the Arena's.
func TestDecodeArenaReuses(t *testing.T) {
	withInfo := manyAccounts(50)
	for i := range withInfo.Accounts {
		withInfo.Accounts[i].Info = &core.AccountInfo{Name: fmt.Sprint("user", i), Role: core.RoleSpeculator, CreatedAt: int64(i)}
	}
	var ar Arena
	for i, rec := range []*core.Record{manyAccounts(100), manyAccounts(3), withInfo, recordgen.Trade(9), manyAccounts(200), manyAccounts(100)} {
		b := Append(nil, rec)
		got, err := DecodeArena(&ar, FormatVersion, b)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, rec) {
			t.Fatalf("record %d of %d accounts: DecodeArena gave %+v\nwant %+v", i, len(rec.Accounts), got, rec)
		}
	}
	b := Append(nil, manyAccounts(150))
	if n := testing.AllocsPerRun(20, func() {
		if _, err := DecodeArena(&ar, FormatVersion, b); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("DecodeArena of 150 accounts into an Arena that held 200: %.0f allocations, want 0", n)
	}
	if _, err := DecodeArena(&ar, FormatVersion+1, b); err == nil {
		t.Fatal("DecodeArena accepted an unknown version")
	}
}
