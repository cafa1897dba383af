package core

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// countingJournal fails the test if a number is reserved.
type countingJournal struct{ t *testing.T }

func (j countingJournal) Next() (uint64, error) {
	j.t.Fatal("a sequence number was reserved for a record over the limit")
	return 0, nil
}
func (j countingJournal) Append(uint64, *Record, chan<- error)      {}
func (j countingJournal) WaitDurable(context.Context, uint64) error { return nil }

// TestCommitRefusesOversizeRecord: a record over either limit is refused
// with ErrRecordTooLarge before a sequence number is reserved or anything
// applied, instead of reaching the codec, which panics on it.
func TestCommitRefusesOversizeRecord(t *testing.T) {
	tests := []struct {
		name string
		fill func(ch *AccountChange)
	}{
		{"too many items in a list", func(ch *AccountChange) { ch.NotesRead = make([]uint64, MaxRecordListItems+1) }},
		{"too many bytes", func(ch *AccountChange) { ch.Ledger = make([]LedgerEntry, MaxRecordBytes/maxLedgerBytes+1) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := NewState()
			a := st.newAccount(uuid.New())
			a.lsn = 7
			st.addAccount(a)
			e := &Engine{st: st, j: countingJournal{t}}
			var p pending
			p.rec = Record{Kind: KindNotesRead}
			tc.fill(p.addAccount(a))
			done := make(chan error, 1)
			if e.commit(&p, done, nil) {
				t.Fatal("commit applied a record over the limit")
			}
			if err := <-done; !errors.Is(err, ErrRecordTooLarge) {
				t.Fatalf("commit: %v, want ErrRecordTooLarge", err)
			}
			if a.lsn != 7 || a.refs().ledger[0].Len() != 0 {
				t.Fatalf("account changed: lsn %d, %d ledger entries", a.lsn, a.refs().ledger[0].Len())
			}
		})
	}
}

// TestBookChangeRecordFits: the largest record a book change can build in
// its scratch without an idempotency key (two accounts, every scratch
// array full, the longest reasoning in 4-byte runes) is within both
// limits, which is why commit skips CheckRecordSize for it (pending.sized).
func TestBookChangeRecordFits(t *testing.T) {
	var sc scratch
	sc.reset(KindTrade, 1)
	m := NewState().newMarket(uuid.New())
	sc.market(m)
	sc.rec.Markets[0].Books = sc.books[:1]
	reasoning := strings.Repeat("\U0001F600", MaxReasoningRunes)
	for i := range len(sc.accts) {
		ch := sc.account(&account{}, uuid.New())
		ch.Balances = ch.Balances[:cap(ch.Balances)]
		ch.Ledger = ch.Ledger[:cap(ch.Ledger)]
		sc.poss[i] = Position{Market: m.id}
		ch.Positions = sc.poss[i : i+1]
		if i == 0 {
			sc.trds[0] = TradeSummary{Reasoning: reasoning}
			ch.Trades = sc.trds[:]
		}
	}
	if err := CheckRecordSize(&sc.rec); err != nil {
		t.Fatalf("largest book change: %v", err)
	}
	if n, lim := maxEncodedBytes(&sc.rec), MaxRecordBytes/1000; n > lim {
		t.Fatalf("largest book change up to %d bytes, more than a thousandth of the limit (%d)", n, lim)
	}
}
