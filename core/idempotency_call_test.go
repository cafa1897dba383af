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

// TestIdempotentProposalInSteps: a proposal whose market has more holders
// than one step notifies, sent with an Idempotency-Key (core.IdemCall in
// the context), stores its answer once, in the record that takes the
// bond and answers it once; the same key again, or another request with
// it, changes nothing; and the replayed state equals the live one.
func TestIdempotentProposalInSteps(t *testing.T) {
	h := newHarnessConfig(t, core.Config{CloseInterval: -1, UsageFlushInterval: -1, StepAccounts: 2})
	mkt := h.market("m", 0.05, 100)
	for i := range 5 {
		a := h.account(fmt.Sprintf("holder%d", i), core.RoleSpeculator, 100)
		if _, err := h.buy(a, mkt, core.Yes, money.Units(1)); err != nil {
			t.Fatal(err)
		}
	}
	proposer := h.account("proposer", core.RoleSpeculator, 1000)
	h.clock.Advance(25 * time.Hour)
	answers := 0
	call := &core.IdemCall{Idempotent: core.Idempotent{Key: "p-1", Fingerprint: [32]byte{1}}, Account: proposer,
		Answer: func(outcome any) (uint16, []byte) {
			answers++
			return 200, []byte(outcome.(core.ProposalView).Proposal.ID.String())
		}}
	ctx := context.WithValue(h.ctx, core.IdemContextKey{}, call)
	req := core.ProposeRequest{Account: proposer, Market: mkt, Outcome: core.Yes}
	before := len(h.j.Records(t))
	p, err := h.e.Propose(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h.j.Records(t)) - before; n < 3 {
		t.Fatalf("the proposal took %d records; want it told in steps (at least 3)", n)
	}
	balance := h.balance(proposer, money.KP)
	records := len(h.j.Records(t))
	es, err := h.e.Idempotent(h.ctx, proposer, "p-1")
	if err != nil || len(es) != 1 || string(es[0].Answer) != p.Proposal.ID.String() || answers != 1 {
		t.Fatalf("stored %+v, %v after %d answers; want the proposal %s once", es, err, answers, p.Proposal.ID)
	}
	// The operation's own checks run before the key's (transport answers a
	// repeat from its entry before it reaches core): either refusal
	// changes nothing.
	if _, err := h.e.Propose(ctx, req); !errors.Is(err, core.ErrIdempotencyReplay) && !errors.Is(err, core.ErrProposalOpen) {
		t.Fatalf("the same key again: %v, want ErrIdempotencyReplay or ErrProposalOpen", err)
	}
	call.Fingerprint = [32]byte{2}
	if _, err := h.e.Propose(ctx, req); !errors.Is(err, core.ErrIdempotencyKeyReused) && !errors.Is(err, core.ErrProposalOpen) {
		t.Fatalf("another request with the key: %v", err)
	}
	if got := h.balance(proposer, money.KP); got != balance || len(h.j.Records(t)) != records {
		t.Fatalf("the repeats changed the state: balance %s, %d records; want %s, %d", got, len(h.j.Records(t)), balance, records)
	}
	requireEqual(t, h.replayed(), h.e.State())
}
