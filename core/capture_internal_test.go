package core

import (
	"reflect"
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// An account whose ledger is longer than one image change continues in
// changes without Info; loading them rebuilds the same account.
func TestCaptureSplitsLongLedgers(t *testing.T) {
	st := NewState()
	a := newAccount(uuid.New())
	a.info = AccountInfo{Name: "long"}
	var bal money.Amount
	for i := range 10 {
		bal += 1
		a.ledger[money.KP] = append(a.ledger[money.KP], LedgerEntry{Seq: uint64(i + 1), Currency: money.KP,
			Type: TxSignupBonus, Amount: 1, BalanceAfter: bal})
	}
	a.balances[money.KP] = bal
	a.lsn = 10
	st.supply.minted[money.KP] = bal
	st.addAccount(a)

	var images []*Record
	var changes int
	if _, err := st.capture(2, 3, func(r *Record) error {
		changes += len(r.Accounts)
		images = append(images, r.Clone())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if changes < 5 { // the house, then the long account in 4 pieces
		t.Fatalf("%d account changes, want the ledger split in pieces of 3", changes)
	}
	loaded := NewState()
	for _, im := range images {
		if err := loaded.LoadImage(im); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := loaded.Canonical(), st.Canonical(); !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded state differs:\n got %+v\nwant %+v", got.Accounts, want.Accounts)
	}
	if err := loaded.Check(); err != nil {
		t.Fatal(err)
	}
}
