package core_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/memjournal"
)

// A second revoke of a key whose first revoke is not durable yet must not
// answer "revoked": if the first never becomes durable, the key is active
// again after recovery.
func TestRevokeAnswersOnlyOnceDurable(t *testing.T) {
	j := memjournal.New()
	e := core.NewEngine(core.NewState(), j, core.Config{CloseInterval: -1})
	defer e.Close()
	ctx := context.Background()
	v, err := e.CreateAccount(ctx, core.NewAccount{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	alice := v.ID
	k, err := e.CreateKey(ctx, core.NewKey{Account: alice, Name: "k", Hash: [32]byte{1}, Prefix: "svc_live_01234567", Scopes: core.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}

	j.Hold()
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { _, err := e.RevokeKey(ctx, alice, k.ID); first <- err }()
	j.WaitUntil(func(s memjournal.State) bool { return s.Unacked == 1 }) // applied, not durable
	go func() {
		_, err := e.RevokeKey(ctx, alice, k.ID)
		second <- err
		j.Wake()
	}()
	// The second revoke must wait for the first: it either waits on the
	// journal or, wrongly, answers at once.
	j.WaitUntil(func(s memjournal.State) bool { return s.Waiters == 1 || len(second) == 1 })
	j.Fail(errors.New("fsync failed"))
	if err := <-first; err == nil {
		t.Fatal("the first revoke succeeded although its record failed")
	}
	if err := <-second; err == nil {
		t.Fatal("the second revoke answered success while the first revoke was never durable")
	}
}

// A market is findable only once its goroutine runs: trading on every
// market as soon as a listing shows it never finds a missing inbox.
func TestMarketFindableOnlyWhenRunning(t *testing.T) {
	h := newHarness(t)
	a := h.account("trader", core.RoleSpeculator, 100000)
	var stop atomic.Bool
	seen := map[uuid.UUID]bool{}
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		for !stop.Load() {
			for _, v := range h.e.Markets() {
				if seen[v.ID] {
					continue
				}
				seen[v.ID] = true
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				_, err := h.e.Trade(ctx, core.TradeRequest{Account: a, Market: v.ID, Side: core.Yes, Shares: money.Units(1)})
				cancel()
				if err != nil {
					errc <- err
					return
				}
			}
			runtime.Gosched()
		}
	}()
	for range 500 {
		h.market("m", 0, 100)
	}
	stop.Store(true)
	if err := <-errc; err != nil {
		t.Fatalf("trade on a just-listed market: %v", err)
	}
}

func TestClosesAtBounded(t *testing.T) {
	h := newHarness(t)
	_, err := h.e.CreateMarket(h.ctx, core.NewMarket{Creator: h.admin, Title: "far", Category: "c",
		ClosesAt: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)})
	var fe *core.FieldError
	if !errors.As(err, &fe) || fe.Field != "closes_at" {
		t.Fatalf("closes_at in 2300 = %v, want a field error", err)
	}
}

// TestCloseDueCountsWhatItClosed: two calls of CloseDue that both find a
// market due close it once between them, and only the one that closed it
// counts it. It failed before: each call returned how many markets it
// found due, 1 and 1.
func TestCloseDueCountsWhatItClosed(t *testing.T) {
	h := newHarness(t)
	mkt := h.market("m", 0, 100)
	h.clock.Advance(25 * time.Hour)
	total := countBothStalled(t, h.j, h.e, mkt, func() (int, error) { return h.e.CloseDue(h.ctx) })
	if total != 1 {
		t.Fatalf("the two CloseDue calls counted %d closes, want 1", total)
	}
	if v, _ := h.e.Market(mkt); v.Info.Status != core.StatusClosed {
		t.Fatalf("market %v, want closed", v.Info.Status)
	}
}

// countBothStalled runs call twice so that both find the same work due on
// market mkt: the first is stalled inside its record (Next waits at the
// journal's gate), the second's command then waits in the market's inbox
// behind it, having found the market's view unchanged. It returns the sum
// of the two counts.
func countBothStalled(t *testing.T, j *memjournal.Journal, e *core.Engine, mkt uuid.UUID, call func() (int, error)) int {
	t.Helper()
	open := j.Gate()
	counts := make(chan int, 2)
	run := func() {
		n, err := call()
		if err != nil {
			t.Error(err)
		}
		counts <- n
	}
	go run()
	j.WaitUntil(func(s memjournal.State) bool { return s.AtGate == 1 })
	go run()
	for core.InboxLen(e, mkt) == 0 {
		runtime.Gosched()
	}
	open()
	return <-counts + <-counts
}
