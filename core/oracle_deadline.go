package core

import (
	"context"

	"github.com/google/uuid"

	"marketd/core/money"
)

// proposalClose is how a settlement ends a market's open proposal, in the
// settlement's own record: the proposal's after-image and the bonds it
// pays out. A nil *proposalClose does nothing.
type proposalClose struct {
	p      Proposal // after-image; the settlement sets ResolvedAt
	pays   []bondPay
	notify bool // oracle_resolved to proposer, challenger and holders
}

// bondPay is one bond leaving a proposal for an account.
type bondPay struct {
	to     uuid.UUID
	t      TxType
	amount money.Amount
}

// due reports whether an open proposal's deadline has passed at nowNanos.
// An escalated proposal has none: it waits for an admin.
func (p *Proposal) due(nowNanos int64) bool {
	switch p.Status {
	case ProposalProposed:
		return nowNanos >= p.ChallengeDeadline
	case ProposalChallenged:
		return nowNanos >= p.VoteDeadline
	}
	return false
}

// cancelProposal returns how an admin's settlement ends the market's open
// proposal: cancelled, every bond back to whoever posted it; nil when none
// is open. Runs on the market's goroutine.
func (m *market) cancelProposal() *proposalClose {
	p, ok := m.openProposal()
	if !ok {
		return nil
	}
	pc := &proposalClose{p: p}
	pc.p.Status = ProposalCancelled
	pc.pays = append(pc.pays, bondPay{p.Proposer, TxOracleBondReturn, p.Bond})
	if p.Challenger != uuid.Nil {
		pc.pays = append(pc.pays, bondPay{p.Challenger, TxOracleBondReturn, p.Bond})
	}
	return pc
}

// accounts returns the accounts pc pays, for the settlement to lock.
func (pc *proposalClose) accounts(st *State) []*account {
	if pc == nil {
		return nil
	}
	out := []*account{st.account(pc.p.Proposer)}
	if pc.p.Challenger != uuid.Nil {
		out = append(out, st.account(pc.p.Challenger))
	}
	return out
}

// apply adds the proposal's after-image, its bond movements and its
// notifications to the settlement being built. Caller holds the mu of
// every account of pc.accounts and of holders.
func (pc *proposalClose) apply(e *Engine, st *settlement, mc *MarketChange, holders []*account) {
	if pc == nil {
		return
	}
	pc.p.ResolvedAt = st.now
	mc.Proposals = append(mc.Proposals, pc.p)
	for _, b := range pc.pays {
		st.payRef(e.st.account(b.to), money.KP, b.t, b.amount, pc.p.ID)
	}
	if pc.notify {
		outcome := mc.Info.Outcome
		st.notifyAll(append(pc.accounts(e.st), holders...),
			Note{Kind: NoteOracleResolved, Time: st.now, Market: mc.ID, Ref: pc.p.ID, Outcome: outcome})
	}
}

// decide applies the deadline of the proposal c names, if it is still the
// market's open proposal and its deadline has passed; otherwise it does
// nothing. Undisputed, the proposal is accepted and the market settles
// with its outcome; voted on, the majority settles the market and its
// backer among proposer and challenger takes both bonds; a tie escalates.
// Runs on the market's goroutine.
func (e *Engine) decide(m *market, c *command) {
	now := e.now()
	p, ok := m.openProposal()
	if !ok || p.ID != c.oracle.proposal || !p.due(now) {
		c.done <- nil
		return
	}
	c.acted = true
	pc := &proposalClose{p: p, notify: true}
	if p.Status == ProposalProposed {
		pc.p.Status = ProposalAccepted
		pc.pays = []bondPay{{p.Proposer, TxOracleBondReturn, p.Bond}}
		e.settleMarket(m, c, KindOracleDeadline, p.Outcome, pc)
		return
	}
	won, decided := e.voteOutcome(m, &p)
	if !decided {
		// The stakes return (payStakes), the bonds stay held for the
		// admin's settlement.
		p.Status = ProposalEscalated
		st := newOracleRecord(m, KindOracleDeadline, now, p)
		e.commitOracle(st, c, p)
		return
	}
	winner := p.Proposer
	pc.p.Status = ProposalAccepted
	if p.Outcome != won {
		winner = p.Challenger
		pc.p.Status = ProposalRejected
	}
	pc.pays = []bondPay{{winner, TxOracleBondReturn, p.Bond}, {winner, TxOracleReward, p.Bond}}
	e.settleMarket(m, c, KindOracleDeadline, won, pc)
}

// OracleDue applies every deadline that has passed: undisputed proposals
// past their challenge window and challenged ones past their vote. It
// returns how many deadlines this call applied (each market's actor checks
// again before it acts, so one another call applied first is not counted);
// after an error, how many it applied before it. The engine runs it every OracleInterval, and once
// at start for the deadlines that passed while it was down.
func (e *Engine) OracleDue(ctx context.Context) (int, error) {
	now := e.now()
	type due struct {
		m        *market
		proposal uuid.UUID
	}
	var list []due
	e.st.rangeMarkets(func(m *market) bool {
		if p, ok := m.view.Load().OpenProposal(); ok && p.due(now) {
			list = append(list, due{m, p.ID})
		}
		return true
	})
	applied := 0
	for _, d := range list {
		c := e.getCommand(opOracleDeadline)
		c.oracle.proposal = d.proposal
		acted, err := e.submitActed(ctx, d.m, c)
		if err != nil {
			return applied, err
		}
		if acted {
			applied++
		}
	}
	return applied, nil
}
