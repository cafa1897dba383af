package core

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// An account whose ledger is longer than one image change continues in
// changes without Info; loading them rebuilds the same account.
func TestCaptureSplitsLongLedgers(t *testing.T) {
	st := NewState()
	a := st.newAccount(uuid.New())
	a.setInfo(&AccountInfo{Name: "long"})
	var bal money.Amount
	for i := range 10 {
		bal += 1
		a.refs().ledger[money.KP].push(ledgerSlot{LedgerEntry: LedgerEntry{Seq: uint64(i + 1), Currency: money.KP,
			Type: TxSignupBonus, Amount: 1, BalanceAfter: bal}})
	}
	a.balances[money.KP] = bal
	a.lsn = 10
	st.supply.minted[money.KP] = bal
	st.addAccount(a)

	var changes int
	loaded := captureAndLoad(t, st, 2, 3, func(r *Record) { changes += len(r.Accounts) })
	if changes < 5 { // the house, then the long account in 4 pieces
		t.Fatalf("%d account changes, want the ledger split in pieces of 3", changes)
	}
	if err := loaded.Check(); err != nil {
		t.Fatal(err)
	}
}

// captureAndLoad captures st in images of chunk objects (State.capture) and
// pieces of piece list items, showing each image to see, loads them into
// a new state and fails t unless it equals st.
func captureAndLoad(t *testing.T, st *State, chunk, piece int, see func(*Record)) *State {
	t.Helper()
	var images []*Record
	if _, err := st.capture(chunk, piece, func(r *Record) error {
		see(r)
		images = append(images, r.Clone())
		return nil
	}); err != nil {
		t.Fatal(err)
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
	return loaded
}

// An account's trades (its fills, GET /api/trades) are as unbounded as its
// ledger: an image change holds at most a piece of them, continuation
// changes the rest, and loading them rebuilds the same fills and recent
// trades. Before they were cut, one account of about a million trades
// made every snapshot's record exceed the codec's limits.
func TestCaptureSplitsLongFills(t *testing.T) {
	const trades = 3*RecentTradesKept + 7
	st := NewState()
	a := st.newAccount(uuid.New())
	a.setInfo(&AccountInfo{Name: "busy"})
	market := uuid.New()
	ch := AccountChange{ID: a.id}
	for i := range trades {
		ch.Trades = append(ch.Trades, TradeSummary{ID: uuid.New(), Market: market, Side: Yes,
			Shares: money.Amount(i + 1), Cost: money.Amount(i + 1), Reasoning: "why"})
	}
	a.applyLocked(7, &ch, IdempotencyLimits{})
	st.addAccount(a)

	const piece = 4
	loaded := captureAndLoad(t, st, 1000, piece, func(r *Record) {
		for _, ac := range r.Accounts {
			if len(ac.Trades) > piece {
				t.Errorf("account %s: an image change of %d trades, want at most %d", ac.ID, len(ac.Trades), piece)
			}
		}
	})
	la := loaded.account(a.id)
	if got, want := listValues(&la.refs().fills), listValues(&a.refs().fills); !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded fills differ: got %d, want %d", len(got), len(want))
	}
	if !reflect.DeepEqual(la.recentTrades(), a.recentTrades()) {
		t.Fatalf("loaded recent trades differ:\n got %+v\nwant %+v", la.recentTrades(), a.recentTrades())
	}
}

// An account's stored idempotent answers are bounded by the configured cap
// of keys (up to 1,000,000 by -idempotency-keys) times the items of a
// batch: an image change holds at most a piece of them too, and loading
// the pieces rebuilds the same entries.
func TestCaptureSplitsLongIdempotency(t *testing.T) {
	st := NewState()
	a := st.newAccount(uuid.New())
	a.setInfo(&AccountInfo{Name: "retrier"})
	ch := AccountChange{ID: a.id}
	for i := range 9 {
		for item := range 3 {
			ch.Idem = append(ch.Idem, IdemEntry{Key: fmt.Sprintf("key-%d", i), Index: uint32(item), Time: int64(i + 1),
				Status: 200, Answer: []byte{byte(i), byte(item)}})
		}
	}
	a.applyLocked(3, &ch, IdempotencyLimits{})
	st.addAccount(a)

	const piece = 4
	loaded := captureAndLoad(t, st, 1000, piece, func(r *Record) {
		for _, ac := range r.Accounts {
			if len(ac.Idem) > piece {
				t.Errorf("account %s: an image change of %d idempotency entries, want at most %d", ac.ID, len(ac.Idem), piece)
			}
		}
	})
	if got, want := len(loaded.account(a.id).idem()), len(a.idem()); got != want {
		t.Fatalf("loaded %d keys, want %d", got, want)
	}
}
