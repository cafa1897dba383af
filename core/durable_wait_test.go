package core_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/memjournal"
)

// heldHarness is a harness whose journal a test holds back or stalls.
type heldHarness struct {
	*harness
	hj *memjournal.Journal
}

func newHeldHarness(t *testing.T, cfg core.Config) *heldHarness {
	t.Helper()
	cfg.CloseInterval, cfg.UsageFlushInterval, cfg.OracleInterval = -1, -1, -1
	h := newHarnessConfig(t, cfg)
	return &heldHarness{harness: h, hj: h.j}
}

// answeredBeforeDurable runs refusal while the journal holds back the
// change it rests on, and reports whether it answered before that change
// was durable. It returns refusal's error once released.
func (h *heldHarness) answeredBeforeDurable(refusal func() error) (early bool, err error) {
	errc := make(chan error, 1)
	go func() { errc <- refusal() }()
	// Either the refusal answers at once (early), or it waits on the
	// journal: both are seen without a timer.
	var got error
	var returned atomic.Bool
	done := make(chan struct{})
	go func() {
		got = <-errc
		returned.Store(true)
		h.hj.Wake()
		close(done)
	}()
	h.hj.WaitUntil(func(s memjournal.State) bool { return returned.Load() || s.Waiters > 0 })
	early = returned.Load()
	h.hj.Release()
	<-done
	return early, got
}

// TestRefusalWaitsForDurability: a refusal that rests on a change not yet
// durable is answered only once that change is, like every other answer
// (docs/API.md, "Durability"). The sell and the name cases failed before:
// the second sell's ErrInsufficientShares and the taken name were answered
// while the change they rest on was still unsynced.
func TestRefusalWaitsForDurability(t *testing.T) {
	tests := []struct {
		name string
		// first starts the change (it blocks until durable); second is
		// the refusal that rests on it.
		run  func(h *heldHarness, acct, mkt uuid.UUID) (first func() error, second func() error)
		want error
	}{
		{"sell of shares a pending sell took", func(h *heldHarness, acct, mkt uuid.UUID) (func() error, func() error) {
			sell := func() error { _, err := h.sell(acct, mkt, core.Yes, money.Units(10)); return err }
			return sell, sell
		}, core.ErrInsufficientShares},
		{"merge of shares a pending sell took", func(h *heldHarness, acct, mkt uuid.UUID) (func() error, func() error) {
			return func() error { _, err := h.sell(acct, mkt, core.Yes, money.Units(10)); return err },
				func() error {
					_, err := h.e.SplitMerge(h.ctx, core.SplitRequest{Account: acct, Market: mkt, Merge: true, Amount: money.Units(10)})
					return err
				}
		}, core.ErrInsufficientShares},
		{"an 11th key while the 10th is pending", func(h *heldHarness, acct, _ uuid.UUID) (func() error, func() error) {
			newKey := func(i int) error {
				_, err := h.e.CreateKey(h.ctx, core.NewKey{Account: acct, Name: "k", Hash: [32]byte{byte(i), 1},
					Prefix: "svc_live_00000000", Scopes: core.ScopeRead})
				return err
			}
			for i := range core.MaxActiveKeys - 1 {
				if err := newKey(i); err != nil {
					h.t.Fatal(err)
				}
			}
			return func() error { return newKey(100) }, func() error { return newKey(101) }
		}, core.ErrKeyLimit},
		{"rotation of a key whose revocation is pending", func(h *heldHarness, acct, _ uuid.UUID) (func() error, func() error) {
			k, err := h.e.CreateKey(h.ctx, core.NewKey{Account: acct, Name: "k", Hash: [32]byte{7}, Prefix: "svc_live_00000000", Scopes: core.ScopeRead})
			if err != nil {
				h.t.Fatal(err)
			}
			return func() error { _, err := h.e.RevokeKey(h.ctx, acct, k.ID); return err },
				func() error {
					_, err := h.e.RotateKey(h.ctx, acct, k.ID, [32]byte{8}, "svc_live_00000001")
					return err
				}
		}, core.ErrKeyNotFound},
		{"a vote whose stake a pending trade spent", func(h *heldHarness, acct, _ uuid.UUID) (func() error, func() error) {
			voted := h.market("voted", 0, 100) // after the voter
			proposer := h.account("proposer", core.RoleSpeculator, 1000)
			challenger := h.account("challenger", core.RoleSpeculator, 1000)
			h.clock.Advance(25 * time.Hour)
			p, err := h.e.Propose(h.ctx, core.ProposeRequest{Account: proposer, Market: voted, Outcome: core.Yes})
			if err != nil {
				h.t.Fatal(err)
			}
			if _, err := h.e.Challenge(h.ctx, core.ChallengeRequest{Account: challenger, Proposal: p.ID}); err != nil {
				h.t.Fatal(err)
			}
			active := h.market("active", 0.05, 100)
			stake := h.balance(acct, money.KP) // all of it: the buy leaves less
			return func() error { _, err := h.buy(acct, active, core.Yes, money.Units(1)); return err },
				func() error {
					_, err := h.e.Vote(h.ctx, core.VoteRequest{Account: acct, Proposal: p.ID, Outcome: core.No, Stake: stake})
					return err
				}
		}, core.ErrInsufficientBalance},
		{"name a pending account took", func(h *heldHarness, _, _ uuid.UUID) (func() error, func() error) {
			return func() error {
					_, err := h.e.CreateAccount(h.ctx, core.NewAccount{Name: "Carol", Role: core.RoleSpeculator, PasswordHash: []byte("h")})
					return err
				},
				func() error { return h.e.NameAvailable(h.ctx, "carol") }
		}, core.ErrNameTaken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHeldHarness(t, core.Config{})
			acct := h.account("bob", core.RoleSpeculator, 1000)
			mkt := h.market("m", 0.05, 100)
			if _, err := h.buy(acct, mkt, core.Yes, money.Units(10)); err != nil {
				t.Fatal(err)
			}
			first, second := tt.run(h, acct, mkt)
			h.hj.Hold()
			before := h.hj.Appended()
			firstErr := make(chan error, 1)
			go func() { firstErr <- first() }()
			h.hj.WaitUntil(func(s memjournal.State) bool { return len(s.Records) > before })
			early, err := h.answeredBeforeDurable(second)
			if early {
				t.Errorf("refusal %v answered while the change it rests on was not durable", err)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("refusal: %v, want %v", err, tt.want)
			}
			if err := <-firstErr; err != nil {
				t.Fatalf("first change: %v", err)
			}
			h.check()
		})
	}
}

// TestMarketBusyAfterBoundedWait: a command that finds its market's inbox
// full gets ErrBusy after the engine's InboxWait, not when the caller's
// context ends (fasthttp's ends only at shutdown). It failed before: the
// command waited until its context's deadline.
func TestMarketBusyAfterBoundedWait(t *testing.T) {
	h := newHeldHarness(t, core.Config{InboxSize: 1, InboxWait: 20 * time.Millisecond})
	acct := h.account("bob", core.RoleSpeculator, 1000)
	mkt := h.market("m", 0.05, 100)
	open := h.hj.Gate()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	buy := func() error {
		_, err := h.e.Trade(ctx, core.TradeRequest{Account: acct, Market: mkt, Side: core.Yes, Shares: money.Units(1)})
		return err
	}
	// The first buy stalls the market goroutine inside Next; of the two
	// others, one fills the inbox of one and the other finds it full.
	// Nothing can complete while the gate is shut, so the first answer
	// is the busy one.
	errs := make(chan error, 3)
	go func() { errs <- buy() }()
	h.hj.WaitUntil(func(s memjournal.State) bool { return s.AtGate == 1 })
	go func() { errs <- buy() }()
	go func() { errs <- buy() }()
	err := <-errs
	ctxErr := ctx.Err()
	if !errors.Is(err, core.ErrBusy) {
		t.Errorf("first answer %v, want ErrBusy", err)
	}
	if ctxErr != nil {
		t.Errorf("ErrBusy came only when the caller's context ended (%v), not after the engine's bounded wait", ctxErr)
	}
	open()
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("trade: %v", err)
		}
	}
	h.check()
}

// TestFillsWaitForDurability: GET /api/trades is how a bot whose trade
// timed out finds whether it happened (docs/API.md, "Finding an order"), so
// a fill is shown only once its trade is durable: shown before, a crash
// could take back a trade the bot was told it made.
func TestFillsWaitForDurability(t *testing.T) {
	for _, lookup := range []string{"Fills", "Fill"} {
		t.Run(lookup, func(t *testing.T) {
			h := newHeldHarness(t, core.Config{})
			acct := h.account("bob", core.RoleSpeculator, 1000)
			mkt := h.market("m", 0.05, 100)
			h.hj.Hold()
			before := h.hj.Appended()
			traded := make(chan core.TradeResult, 1)
			go func() {
				r, err := h.buy(acct, mkt, core.Yes, money.Units(1))
				if err != nil {
					t.Error(err)
				}
				traded <- r
			}()
			h.hj.WaitUntil(func(s memjournal.State) bool { return len(s.Records) > before })
			var id uuid.UUID
			for _, e := range h.hj.Records(t) {
				for _, ch := range e.Accounts {
					for _, tr := range ch.Trades {
						id = tr.ID
					}
				}
			}
			var found int
			early, err := h.answeredBeforeDurable(func() error {
				if lookup == "Fill" {
					_, ok, err := h.e.Fill(h.ctx, acct, id)
					if ok {
						found = 1
					}
					return err
				}
				fills, _, err := h.e.Fills(h.ctx, acct, uuid.Nil, 0, 10)
				found = len(fills)
				return err
			})
			if early {
				t.Errorf("%s answered (%d fills) while the trade was not durable", lookup, found)
			}
			if err != nil || found != 1 {
				t.Errorf("%s: %d fills, %v; want the trade", lookup, found, err)
			}
			<-traded
		})
	}
}
