package core

import (
	"fmt"

	"github.com/google/uuid"

	"marketd/core/money"
)

// The oracle's operations on the market's goroutine: each checks the
// proposal where it lives, builds one record with its after-image and
// commits it as a settlement does.

// openProposal returns the market's open proposal, if any.
// Runs on the market's goroutine.
func (m *market) openProposal() (Proposal, bool) { return openIn(m.proposals) }

// findProposal returns one of the market's proposals by ID.
// Runs on the market's goroutine.
func (m *market) findProposal(id uuid.UUID) (Proposal, bool) {
	for _, p := range m.proposals {
		if p.ID == id {
			return p, true
		}
	}
	return Proposal{}, false
}

// notifyAll adds the note for each account, once each, skipping those
// that turned notifications off. Caller holds the mu of every account in
// accts.
func (st *settlement) notifyAll(accts []*account, n Note) {
	seen := make(map[uuid.UUID]bool, len(accts))
	for _, a := range accts {
		if seen[a.id] || a.info.Settings.NotificationsOff || a.id == HouseID {
			continue
		}
		seen[a.id] = true
		st.notify(a, st.change(a), n)
	}
}

// newOracleRecord starts a record of the kind given that changes the
// market's proposal p; its ledger entries refer to the proposal.
func newOracleRecord(m *market, kind Kind, now int64, p Proposal) *settlement {
	st := &settlement{byID: make(map[uuid.UUID]int), now: now, ref: p.ID}
	st.rec = Record{Kind: kind, Time: now}
	st.addMarket(m).Proposals = []Proposal{p}
	return st
}

// propose is the actor's side of Propose. Runs on the market's goroutine.
func (e *Engine) propose(m *market, c *command) {
	now := e.now()
	switch {
	case m.info.Status == StatusResolved:
		c.done <- ErrMarketResolved
		return
	case m.info.Status == StatusActive && now < m.info.ClosesAt:
		c.done <- ErrMarketNotClosed
		return
	}
	if _, ok := m.openProposal(); ok {
		c.done <- ErrProposalOpen
		return
	}
	holders, more := e.firstHolders(m)
	a := c.acct
	unlock := lockAccounts(append(holders, a)...)
	bond := e.cfg.OracleBond
	if a.balances[money.KP] < bond {
		unlock()
		c.done <- ErrInsufficientBalance
		return
	}
	p := Proposal{ID: e.ids.next(), Outcome: c.oracle.outcome, Status: ProposalProposed, Proposer: a.id,
		Bond: bond, ChallengeDeadline: now + int64(e.cfg.ChallengeWindow), CreatedAt: now}
	st := newOracleRecord(m, KindOracleProposed, now, p)
	st.payRef(a, money.KP, TxOracleBond, -bond, p.ID)
	note := Note{Kind: NoteOracleProposed, Time: now, Market: m.id, Ref: p.ID, Outcome: p.Outcome}
	st.notifyAll(holders, note)
	e.commitOracleSteps(m, st, c, p, holders, more, note, uuid.Nil, unlock)
}

// challenge is the actor's side of Challenge. Runs on the market's
// goroutine.
func (e *Engine) challenge(m *market, c *command) {
	now := e.now()
	a := c.acct
	p, err := m.challengeable(c.oracle.proposal, a.id, now)
	if err != nil {
		c.done <- err
		return
	}
	holders, more := e.firstHolders(m)
	proposer := e.st.account(p.Proposer)
	unlock := lockAccounts(append(holders, a, proposer)...)
	if a.balances[money.KP] < p.Bond {
		unlock()
		c.done <- ErrInsufficientBalance
		return
	}
	p.Status, p.Challenger, p.VoteDeadline = ProposalChallenged, a.id, now+int64(e.cfg.VoteWindow)
	st := newOracleRecord(m, KindOracleChallenge, now, p)
	st.payRef(a, money.KP, TxOracleBond, -p.Bond, p.ID)
	note := Note{Kind: NoteOracleChallenged, Time: now, Market: m.id, Ref: p.ID, Outcome: p.Outcome}
	st.notifyAll(append([]*account{proposer}, holders...), note)
	e.commitOracleSteps(m, st, c, p, holders, more, note, p.ID, unlock)
}

// challengeable returns the proposal id if account may challenge it at
// now, else why not. Runs on the market's goroutine.
func (m *market) challengeable(id, account uuid.UUID, now int64) (Proposal, error) {
	p, ok := m.findProposal(id)
	switch {
	case !ok:
		return p, ErrProposalNotFound
	case p.Status != ProposalProposed:
		return p, ErrNotChallengeable
	case now >= p.ChallengeDeadline:
		return p, ErrChallengeClosed
	case account == p.Proposer:
		return p, ErrSelfChallenge
	}
	return p, nil
}

// votable returns the proposal id if voter may vote on it at now, else why
// not. Runs on the market's goroutine.
func (m *market) votable(id, voter uuid.UUID, now int64) (Proposal, error) {
	p, ok := m.findProposal(id)
	switch {
	case !ok:
		return p, ErrProposalNotFound
	case p.Status != ProposalChallenged || now >= p.VoteDeadline:
		return p, ErrNotVotable
	case voter == p.Proposer || voter == p.Challenger:
		return p, ErrPartyVote
	}
	if _, done := m.voted[voteKey{p.ID, voter}]; done {
		return p, ErrAlreadyVoted
	}
	return p, nil
}

// vote is the actor's side of Vote. Runs on the market's goroutine. The
// vote locks its stake: debited from the voter (ledger oracle_stake) and
// held by the proposal until it is paid out (payStakes). Only accounts
// created before the market vote, so that free registrations buy no
// weight (docs/API.md, "The oracle").
func (e *Engine) vote(m *market, c *command) {
	now := e.now()
	a := c.acct
	voter := a.id
	p, err := m.votable(c.oracle.proposal, voter, now)
	if err != nil {
		c.done <- err
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	stake, side := c.oracle.stake, c.oracle.outcome
	switch {
	case a.info.CreatedAt > m.info.CreatedAt:
		c.done <- ErrVoterTooNew
		return
	case p.Votes[Yes]+p.Votes[No] >= MaxVotesPerProposal:
		c.done <- ErrVoteLimit
		return
	case a.balances[money.KP] < stake:
		c.done <- ErrInsufficientBalance
		return
	}
	st := newOracleRecord(m, KindOracleVote, now, p)
	p.Votes[side]++
	p.Stakes[side] = st.s.add(p.Stakes[side], stake)
	st.rec.Markets[0].Proposals[0] = p
	st.payRef(a, money.KP, TxOracleStake, -stake, p.ID)
	st.rec.Markets[0].Votes = []Vote{{Proposal: p.ID, Account: voter, Outcome: side, Time: now, Stake: stake}}
	e.commitOracle(st, c, p)
}

// commitOracle answers c with p and commits the record, unless building it
// overflowed. Runs on the market's goroutine.
// commitOracleSteps commits the record of a proposal or a challenge that
// notified the market's first holders, then releases its accounts
// (unlock). When more holders remain, the rest hear of it in steps
// (runNotify) and c.done answers the last of them; oracle names the
// proposal whose proposer the record notified already. Runs on the
// market's goroutine.
func (e *Engine) commitOracleSteps(m *market, st *settlement, c *command, p Proposal, first []*account, more bool, note Note, oracle uuid.UUID, unlock func()) {
	if !more {
		e.commitOracle(st, c, p)
		unlock()
		return
	}
	if st.s.err != nil {
		unlock()
		c.done <- fmt.Errorf("core: oracle: %w", st.s.err)
		return
	}
	info := continueNotify(m, st, first, st.rec.Kind, note, oracle)
	c.proposalRes = p
	answerOracle(st, c, p)
	stepDone := make(chan error, 1)
	ok := e.commit(&st.pending, stepDone, nil)
	unlock()
	if !ok {
		c.done <- <-stepDone
		return
	}
	e.runNotify(m, info, c.done)
}

func (e *Engine) commitOracle(st *settlement, c *command, p Proposal) {
	if st.s.err != nil {
		c.done <- fmt.Errorf("core: oracle: %w", st.s.err)
		return
	}
	// c belongs to its caller again once the journal has the record.
	c.proposalRes = p
	answerOracle(st, c, p)
	e.commit(&st.pending, c.done, nil)
}

// answerOracle makes the record the answer of c's idempotent request, if
// any: the proposal after it, which the caller's change (the bond or the
// stake it pays) holds. A proposal or a challenge told in steps stores it
// in its first record, the one that makes the change. Runs on the
// market's goroutine.
func answerOracle(st *settlement, c *command, p Proposal) {
	if c.idem != nil {
		st.pending.idem, st.pending.outcome = c.idem, ProposalView{Market: st.rec.Markets[0].ID, Proposal: p}
	}
}
