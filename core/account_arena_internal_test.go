package core

import (
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// TestAccountArenaKeepsAccountsInPlace: accounts allocated across many
// arrays keep their addresses and contents while more are allocated, and
// each walks them all in the order they were allocated.
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
	var walked []*account
	r.each(func(a *account) bool {
		walked = append(walked, a)
		return true
	})
	if len(walked) != n {
		t.Fatalf("each walked %d accounts, want %d", len(walked), n)
	}
	for i, a := range walked {
		if a != accts[i] {
			t.Fatalf("each's account %d is not the %dth allocated", i, i)
		}
	}
}
