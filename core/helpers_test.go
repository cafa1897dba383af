package core_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/manualclock"
	"marketd/internal/memjournal"
)

type harness struct {
	t     testing.TB
	ctx   context.Context
	j     *memjournal.Journal
	clock *manualclock.Clock
	e     *core.Engine
	admin uuid.UUID
}

// newHarness runs an engine with no background loops: tests close markets,
// flush key usage and apply the oracle's deadlines themselves, so that the
// log holds only what they did. (The oracle's loop also runs once at start,
// at a moment of its own: it could apply a deadline the test had just moved
// the clock past.)
func newHarness(t testing.TB) *harness {
	t.Helper()
	return newHarnessConfig(t, core.Config{CloseInterval: -1, UsageFlushInterval: -1, OracleInterval: -1})
}

// newHarnessConfig runs an engine with cfg and the harness's clock. The
// oracle's loop is off unless cfg sets its interval (see newHarness).
func newHarnessConfig(t testing.TB, cfg core.Config) *harness {
	t.Helper()
	h := &harness{t: t, ctx: context.Background(), j: memjournal.New(), clock: newClock()}
	cfg.Now = h.clock.Now
	if cfg.OracleInterval == 0 {
		cfg.OracleInterval = -1
	}
	h.e = core.NewEngine(core.NewState(), h.j, cfg)
	t.Cleanup(h.e.Close)
	h.admin = h.account("admin", core.RoleAdmin, 0)
	return h
}

func (h *harness) account(name string, role core.Role, bonusUnits int64) uuid.UUID {
	h.t.Helper()
	v, err := h.e.CreateAccount(h.ctx, core.NewAccount{Name: name, Role: role, Bonus: money.Units(bonusUnits), PasswordHash: []byte("hash")})
	if err != nil {
		h.t.Fatalf("create account %s: %v", name, err)
	}
	return v.ID
}

func (h *harness) market(title string, alpha float64, liquidityUnits int64) uuid.UUID {
	h.t.Helper()
	v, err := h.e.CreateMarket(h.ctx, core.NewMarket{Creator: h.admin, Title: title, Category: "test",
		ClosesAt: h.clock.Now().Add(24 * time.Hour), Alpha: alpha, Liquidity: money.Units(liquidityUnits)})
	if err != nil {
		h.t.Fatalf("create market %s: %v", title, err)
	}
	return v.ID
}

func (h *harness) buy(acct, mkt uuid.UUID, side core.Side, shares money.Amount) (core.TradeResult, error) {
	return h.e.Trade(h.ctx, core.TradeRequest{Account: acct, Market: mkt, Side: side, Shares: shares})
}

func (h *harness) sell(acct, mkt uuid.UUID, side core.Side, shares money.Amount) (core.TradeResult, error) {
	return h.e.Trade(h.ctx, core.TradeRequest{Account: acct, Market: mkt, Side: side, Shares: shares, Sell: true})
}

func (h *harness) balance(acct uuid.UUID, cur money.Currency) money.Amount {
	v, ok := h.e.Account(acct)
	if !ok {
		h.t.Fatalf("account %s not found", acct)
	}
	return v.Balances[cur]
}

// check runs the full invariant checker.
func (h *harness) check() {
	h.t.Helper()
	if err := h.e.State().Check(); err != nil {
		h.t.Fatalf("invariants: %v", err)
	}
}

// replayed rebuilds a state from the journal's records alone.
func (h *harness) replayed() *core.State {
	h.t.Helper()
	st := core.NewState()
	for i, r := range h.j.Records(h.t) {
		if err := st.Apply(uint64(i+1), r); err != nil {
			h.t.Fatalf("replay record %d: %v", i+1, err)
		}
	}
	return st
}

// requireEqual fails when two states differ, naming the first difference.
func requireEqual(t testing.TB, got, want *core.State) {
	t.Helper()
	g, w := got.Canonical(), want.Canonical()
	if reflect.DeepEqual(g, w) {
		return
	}
	t.Fatalf("states differ: %s", firstDiff(g, w))
}

func firstDiff(g, w *core.Record) string {
	if len(g.Accounts) != len(w.Accounts) {
		return fmt.Sprintf("%d accounts, want %d", len(g.Accounts), len(w.Accounts))
	}
	for i := range g.Accounts {
		if !reflect.DeepEqual(g.Accounts[i], w.Accounts[i]) {
			return fmt.Sprintf("account %d:\n got %+v\nwant %+v", i, g.Accounts[i], w.Accounts[i])
		}
	}
	if len(g.Markets) != len(w.Markets) {
		return fmt.Sprintf("%d markets, want %d", len(g.Markets), len(w.Markets))
	}
	for i := range g.Markets {
		if !reflect.DeepEqual(g.Markets[i], w.Markets[i]) {
			return fmt.Sprintf("market %d:\n got %+v %+v\nwant %+v %+v", i, g.Markets[i], *g.Markets[i].Info, w.Markets[i], *w.Markets[i].Info)
		}
	}
	if !reflect.DeepEqual(g.Supply, w.Supply) {
		return fmt.Sprintf("supply %+v, want %+v", g.Supply, w.Supply)
	}
	return fmt.Sprintf("keys or sessions differ: %d/%d keys, %d/%d sessions", len(g.Keys), len(w.Keys), len(g.Sessions), len(w.Sessions))
}

// newClock is the tests' clock: it starts at a fixed time and moves by a
// microsecond at every reading, so that events get distinct, increasing
// timestamps.
func newClock() *manualclock.Clock {
	return manualclock.NewTicking(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), time.Microsecond)
}

// fromImage loads captured images, then replays the journal's records after
// from: how recovery rebuilds a state from a fuzzy snapshot.
func fromImage(t testing.TB, images []*core.Record, recs []*core.Record, from uint64) *core.State {
	t.Helper()
	st := core.NewState()
	for _, im := range images {
		if err := st.LoadImage(im); err != nil {
			t.Fatalf("load image: %v", err)
		}
	}
	for seq := from + 1; seq <= uint64(len(recs)); seq++ {
		if err := st.Apply(seq, recs[seq-1]); err != nil {
			t.Fatalf("replay %d after image at %d: %v", seq, from, err)
		}
	}
	return st
}
