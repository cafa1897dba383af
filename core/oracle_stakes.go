package core

import (
	"fmt"

	"github.com/google/uuid"

	"marketd/core/money"
)

// Vote stakes (docs/API.md, "The oracle"). A vote locks a stake and weighs
// by it. A vote decides only with at least Config.VoteQuorum of stake from
// at least Config.MinVoters accounts, on a market with no USDC book (KP is
// free at signup and must never settle USDC payouts), and without a tie;
// otherwise the proposal escalates to the admin. On a decision the losing
// side's stakes are shared among the winning side's voters pro rata,
// rounded down, the rest to the house; on escalation or cancellation every
// stake returns.
//
// The payouts go out in bounded records (KindOracleStakes) of at most
// Config.StepAccounts voters, as a close's or a settlement's steps
// (steps.go): the proposal's after-image carries its StakeCursor (votes
// paid, in vote order) and StakesPaid, so that a restart resumes after the
// last record (payStakes from resume) and every voter is paid exactly once.
// Until then the unpaid stakes are held outside every account, and the
// conservation invariant counts them (Proposal.HeldStakes).

// voteOutcome says whether a challenged proposal's vote decides, and for
// which side: the larger stake, if the vote has the weight to decide.
// Runs on the market's goroutine.
func (e *Engine) voteOutcome(m *market, p *Proposal) (Side, bool) {
	yes, no := p.Stakes[Yes], p.Stakes[No]
	voters := p.Votes[Yes] + p.Votes[No]
	switch {
	case m.open[money.USDC], yes == no, yes+no < e.cfg.VoteQuorum, voters < uint64(e.cfg.MinVoters):
		return 0, false
	case yes > no:
		return Yes, true
	}
	return No, true
}

// stakesDue reports whether a proposal's stakes are to be paid out: its
// vote is over (decided, escalated or cancelled) and some remain held.
func (p *Proposal) stakesDue() bool {
	if p.VoteDeadline == 0 || p.Status == ProposalProposed || p.Status == ProposalChallenged {
		return false
	}
	return p.HeldStakes() > 0
}

// stakeWinner returns the side whose voters share the losers' stakes, and
// false when every stake returns: the proposal was escalated or cancelled.
func (p *Proposal) stakeWinner() (Side, bool) {
	switch p.Status {
	case ProposalAccepted:
		return p.Outcome, true
	case ProposalRejected:
		return 1 - p.Outcome, true
	}
	return 0, false
}

// stakesDue reports whether any proposal of the market has stakes to pay
// out. Runs on the market's goroutine (or before the engine starts).
func (m *market) stakesDue() bool {
	for i := range m.proposals {
		if m.proposals[i].stakesDue() {
			return true
		}
	}
	return false
}

// votesOf returns the market's votes on a proposal, in vote order.
// Runs on the market's goroutine.
func (m *market) votesOf(id uuid.UUID) []Vote {
	var out []Vote
	for _, v := range m.votes {
		if v.Proposal == id {
			out = append(out, v)
		}
	}
	return out
}

// answerAfterStakes runs op (a settlement or an oracle deadline), then
// pays out the stakes its records freed, and only then answers on c.done:
// the payouts are part of the settlement's steps (docs/ARCHITECTURE.md,
// "Bounded steps"), and docs/API.md promises the answer once the last step
// is durable, so that nobody reads a settled market whose voters' stakes
// are still moving. op's own outcome comes first; a failed payout record
// turns a success into that error. Runs on the market's goroutine.
func (e *Engine) answerAfterStakes(m *market, c *command, op func(*market, *command)) {
	// op answers a copy: the caller reads c.done while it waits, so the
	// actor must not write it; the results come back before the answer.
	inner := *c
	inner.done = make(chan error, 1)
	op(m, &inner)
	stakesErr := e.payStakes(m)
	err := <-inner.done
	if err == nil {
		err = stakesErr
	}
	c.settleRes, c.proposalRes, c.oracle, c.acted = inner.settleRes, inner.proposalRes, inner.oracle, inner.acted
	c.done <- err
}

// payStakes pays out the stakes of every proposal of the market whose vote
// is over, one bounded record at a time, each durable before the next. It
// stops at the first error (the log failed: the engine stops) and returns
// it. Runs on the market's goroutine, after an oracle deadline or a
// settlement, and at start for payouts a restart interrupted.
func (e *Engine) payStakes(m *market) error {
	for i := range m.proposals {
		for m.proposals[i].stakesDue() {
			done := make(chan error, 1)
			if !e.stakeStep(m, m.proposals[i], done) {
				return <-done
			}
			if err := <-done; err != nil {
				return err
			}
		}
	}
	return nil
}

// stakeStep builds and commits the next record of p's stake payouts: the
// voters from p.StakeCursor on, at most Config.StepAccounts of them, and in
// the last record what rounding left, to the house. It reports whether the
// record was committed; done receives its outcome. Runs on the market's
// goroutine.
func (e *Engine) stakeStep(m *market, p Proposal, done chan<- error) bool {
	votes := m.votesOf(p.ID)
	if p.StakeCursor > uint64(len(votes)) {
		panic(fmt.Sprintf("BUG: proposal %s: stake cursor %d past its %d votes", p.ID, p.StakeCursor, len(votes)))
	}
	chunk := votes[p.StakeCursor:]
	if len(chunk) > e.cfg.StepAccounts {
		chunk = chunk[:e.cfg.StepAccounts]
	}
	last := p.StakeCursor+uint64(len(chunk)) == uint64(len(votes))
	accts := make([]*account, 0, len(chunk)+1)
	for _, v := range chunk {
		accts = append(accts, e.st.account(v.Account))
	}
	house := e.st.account(HouseID)
	if last {
		accts = append(accts, house)
	}
	if len(accts) > 0 {
		defer lockAccounts(accts...)()
	}
	now := e.now()
	st := newOracleRecord(m, KindOracleStakes, now, p)
	won, decided := p.stakeWinner()
	var paid money.Amount
	for _, v := range chunk {
		a := e.st.account(v.Account)
		if v.Stake == 0 {
			continue // a vote made before stakes
		}
		if decided && v.Outcome != won {
			continue // lost to the winners
		}
		st.payRef(a, money.KP, TxOracleStakeReturn, v.Stake, p.ID)
		paid = st.s.add(paid, v.Stake)
		if decided {
			share := st.s.share(v.Stake, p.Stakes[1-won], p.Stakes[won])
			if share > 0 {
				st.payRef(a, money.KP, TxOracleReward, share, p.ID)
				paid = st.s.add(paid, share)
			}
		}
	}
	p.StakeCursor += uint64(len(chunk))
	p.StakesPaid = st.s.add(p.StakesPaid, paid)
	if last {
		// What the pro rata shares rounded down, to the house.
		if rest := p.HeldStakes(); rest > 0 {
			st.payRef(house, money.KP, TxOracleReward, rest, p.ID)
			p.StakesPaid = st.s.add(p.StakesPaid, rest)
		}
	}
	if p.HeldStakes() < 0 {
		panic(fmt.Sprintf("BUG: proposal %s paid %s of %v staked", p.ID, p.StakesPaid, p.Stakes))
	}
	st.rec.Markets[0].Proposals[0] = p
	if st.s.err != nil {
		done <- fmt.Errorf("core: oracle stakes: %w", st.s.err)
		return false
	}
	return e.commit(&st.pending, done, nil)
}
