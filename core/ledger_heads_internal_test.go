package core

import (
	"testing"

	"marketd/core/money"
)

// TestLedgerFirstEntriesShareArrays: ledgers whose first entries sit side
// by side in ledgerHeads' arrays grow without touching each other, and a
// ledger's entries read back in order.
func TestLedgerFirstEntriesShareArrays(t *testing.T) {
	accts := make([]*account, 3)
	for i := range accts {
		accts[i] = testAccount()
		accts[i].appendLedger(&LedgerEntry{Seq: uint64(i + 1), Currency: money.KP, Type: TxSignupBonus, Amount: 1})
	}
	// The middle one grows past its first entry, the others do not.
	for j := range 300 {
		accts[1].appendLedger(&LedgerEntry{Seq: uint64(100 + j), Currency: money.KP, Type: TxTradeBuy, Amount: -1})
	}
	for i, want := range []int{1, 301, 1} {
		led := accts[i].refs().ledger[money.KP].snapshot()
		if led.Len() != want {
			t.Fatalf("account %d: %d entries, want %d", i, led.Len(), want)
		}
		if got := led.at(0).Seq; got != uint64(i+1) {
			t.Fatalf("account %d: first entry's Seq %d, want %d (a neighbour's growth wrote over it)", i, got, i+1)
		}
	}
	led := accts[1].refs().ledger[money.KP].snapshot()
	for j := 1; j < 301; j++ {
		if got := led.at(j).Seq; got != uint64(100+j-1) {
			t.Fatalf("entry %d: Seq %d, want %d", j, got, 100+j-1)
		}
	}
	if v := accts[1].volumeKP; v != 300 {
		t.Fatalf("volume %d, want 300: the aggregates follow every entry", v)
	}
}
