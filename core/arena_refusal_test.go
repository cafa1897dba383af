package core_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"marketd/core"
	"marketd/core/money"
)

// TestRefusedCreationsTakeNoMemory: an arena never gives memory back, so a
// request that is refused must not take any (core/arena.go). A market
// created with an idempotency key past the caller's cap, and an account
// whose signup bonus the supply's cap refuses, leave both arenas as they
// were, however often they are sent.
func TestRefusedCreationsTakeNoMemory(t *testing.T) {
	lim := core.IdempotencyLimits{Retention: time.Hour, Keys: 1}
	h := newHarnessConfig(t, core.Config{CloseInterval: -1, UsageFlushInterval: -1, Idempotency: lim})
	create := func(key string) error {
		call := &core.IdemCall{Idempotent: core.Idempotent{Key: key, Fingerprint: [32]byte{1}}, Account: h.admin,
			Answer: func(any) (uint16, []byte) { return 200, []byte("created") }}
		_, err := h.e.CreateMarket(context.WithValue(h.ctx, core.IdemContextKey{}, call), core.NewMarket{
			Creator: h.admin, Title: "m " + key, Category: "test", ClosesAt: h.clock.Now().Add(24 * time.Hour),
			Alpha: 0.05, Liquidity: money.Units(1000)})
		return err
	}
	if err := create("k0"); err != nil {
		t.Fatal(err)
	}
	// Bonuses of the largest amount until the supply's cap refuses one.
	rich := func(i int) error {
		_, err := h.e.CreateAccount(h.ctx, core.NewAccount{Name: fmt.Sprint("rich", i), Role: core.RoleSpeculator,
			Bonus: core.MaxAmount, PasswordHash: []byte("hash")})
		return err
	}
	for i := 0; ; i++ {
		if err := rich(i); errors.Is(err, core.ErrTotalLimit) {
			break
		} else if err != nil || i > int(core.MaxSupply/core.MaxAmount) {
			t.Fatalf("account %d of the largest bonus: %v", i, err)
		}
	}
	accounts, markets := core.ArenaLens(h.e.State())
	for i := range 20 {
		if err := create(fmt.Sprint("k", i+1)); !errors.Is(err, core.ErrIdempotencyKeyLimit) {
			t.Fatalf("market with key %d past the cap: %v, want ErrIdempotencyKeyLimit", i+1, err)
		}
		if err := rich(100_000 + i); !errors.Is(err, core.ErrTotalLimit) {
			t.Fatalf("account past the supply's cap: %v, want ErrTotalLimit", err)
		}
	}
	if a, m := core.ArenaLens(h.e.State()); a != accounts || m != markets {
		t.Errorf("after 20 refusals of each: %d accounts and %d markets allocated, want %d and %d", a, m, accounts, markets)
	}
	h.check()
}
