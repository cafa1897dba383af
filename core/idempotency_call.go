package core

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// IdemCall is an idempotent request to an operation other than a trade, a
// split-merge or a batch (which carry theirs in their request): it travels
// in the operation's context.Context under IdemContextKey, so that every
// operation that commits through one path (pending.answer, then commit)
// stores its answer without a parameter of its own (docs/API.md,
// "Idempotent requests").
type IdemCall struct {
	Idempotent
	// Account is the caller's: the entry is stored in its change, which
	// the operation's record must hold.
	Account uuid.UUID
	// Answer renders the stored answer from the operation's outcome (the
	// value the operation returns): opaque bytes, transport's encoding.
	// It runs under the operation's locks, before the record is applied.
	Answer func(outcome any) (status uint16, body []byte)
}

// IdemContextKey is the context key of a request's *IdemCall. transport
// sets it as a user value of fasthttp's RequestCtx, whose Value reads
// user values.
type IdemContextKey struct{}

// idemCallOf returns the idempotent request an operation answers, nil
// when none.
func idemCallOf(ctx context.Context) *IdemCall {
	if ctx == nil {
		return nil
	}
	ic, _ := ctx.Value(IdemContextKey{}).(*IdemCall)
	if ic == nil || ic.Key == "" {
		return nil
	}
	return ic
}

// answer makes the record being built the answer of the idempotent
// request in ctx, if any, whose outcome is outcome: commit checks the key
// and stores the entry in the caller's change. An operation calls it once
// it knows that it changes something and what it will answer.
func (p *pending) answer(ctx context.Context, outcome any) {
	if ic := idemCallOf(ctx); ic != nil {
		p.idem, p.outcome = ic, outcome
	}
}

// answerAs is answer for an operation whose record need not change the
// caller's account: a, the caller's account, joins the record with no
// change but the entry when the record does not change it already. Call it
// once every other change is in the record (it may move p.rec.Accounts).
// Caller holds a.mu, taken in the lock order (doc.go) when the request has
// a key (lockCaller).
func (p *pending) answerAs(ctx context.Context, a *account, outcome any) {
	ic := idemCallOf(ctx)
	if ic == nil {
		return
	}
	if a == nil || a.id != ic.Account {
		panic(fmt.Sprintf("BUG: idempotent answer of account %s stored as another's", ic.Account))
	}
	if !slices.ContainsFunc(p.rec.Accounts, func(ch AccountChange) bool { return ch.ID == a.id }) {
		p.addAccount(a)
	}
	p.idem, p.outcome = ic, outcome
}

// idemCaller returns the caller's account when ctx holds an idempotent
// request, which then joins the operation's record (answerAs); nil without
// one.
func (e *Engine) idemCaller(ctx context.Context) (*account, error) {
	ic := idemCallOf(ctx)
	if ic == nil {
		return nil, nil
	}
	a := e.st.account(ic.Account)
	if a == nil {
		return nil, ErrAccountNotFound
	}
	return a, nil
}

// attachIdem runs in commit before anything is applied: it checks the key
// (reused, already answered, the account's cap) and adds the entry to the
// caller's change. Its errors change nothing. The caller of commit holds
// the caller's account lock, as it holds every account of the record.
func (e *Engine) attachIdem(p *pending) error {
	ic := p.idem
	for i := range p.rec.Accounts {
		ch := &p.rec.Accounts[i]
		if ch.ID != ic.Account {
			continue
		}
		if err := e.checkIdem(p.accts[i], &ic.Idempotent, p.rec.Time); err != nil {
			return err
		}
		status, body := ic.Answer(p.outcome)
		ie := idemEntry(&ic.Idempotent, p.rec.Time, body)
		ie.Status = status
		ch.Idem = append(ch.Idem, ie)
		return nil
	}
	panic(fmt.Sprintf("BUG: idempotent answer for account %s, which the %v record does not change", ic.Account, p.rec.Kind))
}
