package core

import (
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// TestAccountArenaKeepsAccountsInPlace: accounts allocated across many
// arrays keep their addresses and contents while more are allocated, and
// a released slot comes back empty for the next account.
func TestAccountArenaKeepsAccountsInPlace(t *testing.T) {
	var r accountArena
	const n = 3*arenaMaxChunk + 7
	accts := make([]*account, n)
	for i := range accts {
		a := r.alloc(uuid.UUID{byte(i), byte(i >> 8), 1})
		a.balances[money.KP] = money.Amount(i)
		accts[i] = a
	}
	seen := make(map[*account]bool, n)
	for i, a := range accts {
		if seen[a] {
			t.Fatalf("account %d shares its memory with another", i)
		}
		seen[a] = true
		if a.id != (uuid.UUID{byte(i), byte(i >> 8), 1}) || a.balances[money.KP] != money.Amount(i) {
			t.Fatalf("account %d changed after later allocations: id %s, balance %d", i, a.id, a.balances[money.KP])
		}
	}
	gone := accts[5]
	gone.appendLedger(LedgerEntry{Currency: money.KP, Type: TxSignupBonus, Amount: 1})
	r.release(gone)
	again := r.alloc(uuid.UUID{9})
	if again != gone {
		t.Fatalf("released slot %p not reused: got %p", gone, again)
	}
	if again.id != (uuid.UUID{9}) || again.balances[money.KP] != 0 || ledgerEntries(&again.ledger) != 0 || again.lsn != 0 {
		t.Fatalf("reused slot not empty: id %s, balance %d, %d ledger entries", again.id, again.balances[money.KP], ledgerEntries(&again.ledger))
	}
	if next := r.alloc(uuid.UUID{10}); seen[next] {
		t.Fatal("an allocation after the free list ran out reused a live account")
	}
}
