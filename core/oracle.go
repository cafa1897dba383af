package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"marketd/core/money"
)

// Defaults of the oracle (decisions.md section 10).
const (
	// DefaultOracleBond is the KP a proposal, and a challenge, hold.
	DefaultOracleBond = money.Amount(100 * money.Scale)
	// DefaultChallengeWindow is how long a proposal may be challenged.
	DefaultChallengeWindow = 2 * time.Hour
	// DefaultVoteWindow is how long a challenged proposal takes votes.
	DefaultVoteWindow = 24 * time.Hour
)

// oracleDefaults fills the oracle's zero settings with their defaults.
func (cfg *Config) oracleDefaults() {
	if cfg.OracleBond <= 0 {
		cfg.OracleBond = DefaultOracleBond
	}
	if cfg.ChallengeWindow <= 0 {
		cfg.ChallengeWindow = DefaultChallengeWindow
	}
	if cfg.VoteWindow <= 0 {
		cfg.VoteWindow = DefaultVoteWindow
	}
	if cfg.OracleInterval == 0 {
		cfg.OracleInterval = time.Second
	}
}

// ProposeRequest proposes the outcome of a closed market.
type ProposeRequest struct {
	Account uuid.UUID
	Market  uuid.UUID
	Outcome Side
}

// ChallengeRequest challenges a proposal inside its challenge window.
type ChallengeRequest struct {
	Account  uuid.UUID
	Proposal uuid.UUID
}

// VoteRequest votes on a challenged proposal.
type VoteRequest struct {
	Account  uuid.UUID
	Proposal uuid.UUID
	Outcome  Side
}

// ProposalView is a proposal with the market it would resolve.
type ProposalView struct {
	Market uuid.UUID
	Proposal
}

// oracleRequest is what an oracle command carries to the market's actor;
// the acting account, if any, is the command's acct.
type oracleRequest struct {
	proposal uuid.UUID
	outcome  Side
}

// Propose opens an oracle proposal on a closed, unresolved market, holding
// the proposer's bond, and answers once it is durable.
func (e *Engine) Propose(ctx context.Context, req ProposeRequest) (ProposalView, error) {
	if req.Outcome != Yes && req.Outcome != No {
		return ProposalView{}, fieldErr("outcome", "must be yes or no")
	}
	m, a, err := e.marketAndTrader(req.Market, req.Account)
	if err != nil {
		return ProposalView{}, err
	}
	c := e.getCommand(opPropose)
	c.acct, c.oracle.outcome = a, req.Outcome
	return e.submitOracle(ctx, m, c)
}

// Challenge challenges a proposal, holding an equal bond from the
// challenger, and opens its vote.
func (e *Engine) Challenge(ctx context.Context, req ChallengeRequest) (ProposalView, error) {
	m, a, err := e.proposalAndAccount(req.Proposal, req.Account)
	if err != nil {
		return ProposalView{}, err
	}
	c := e.getCommand(opChallenge)
	c.acct, c.oracle.proposal = a, req.Proposal
	return e.submitOracle(ctx, m, c)
}

// Vote records an account's vote on a challenged proposal.
func (e *Engine) Vote(ctx context.Context, req VoteRequest) (ProposalView, error) {
	if req.Outcome != Yes && req.Outcome != No {
		return ProposalView{}, fieldErr("outcome", "must be yes or no")
	}
	m, a, err := e.proposalAndAccount(req.Proposal, req.Account)
	if err != nil {
		return ProposalView{}, err
	}
	c := e.getCommand(opVote)
	c.acct, c.oracle = a, oracleRequest{proposal: req.Proposal, outcome: req.Outcome}
	return e.submitOracle(ctx, m, c)
}

// Proposal returns an oracle proposal as last published.
func (e *Engine) Proposal(id uuid.UUID) (ProposalView, error) {
	mid, ok := e.st.proposalMarket(id)
	if !ok {
		return ProposalView{}, ErrProposalNotFound
	}
	v := e.st.market(mid).view.Load()
	for _, p := range v.Proposals {
		if p.ID == id {
			return ProposalView{Market: mid, Proposal: p}, nil
		}
	}
	return ProposalView{}, ErrProposalNotFound
}

// LatestProposal returns a market's newest oracle proposal.
func (e *Engine) LatestProposal(market uuid.UUID) (ProposalView, error) {
	m := e.st.market(market)
	if m == nil {
		return ProposalView{}, ErrMarketNotFound
	}
	p, ok := m.view.Load().LatestProposal()
	if !ok {
		return ProposalView{}, ErrProposalNotFound
	}
	return ProposalView{Market: market, Proposal: p}, nil
}

// proposalAndAccount finds the market of a proposal and the acting
// account; the house does not take part.
func (e *Engine) proposalAndAccount(proposal, accountID uuid.UUID) (*market, *account, error) {
	mid, ok := e.st.proposalMarket(proposal)
	if !ok {
		return nil, nil, ErrProposalNotFound
	}
	return e.marketAndTrader(mid, accountID)
}

// oracleRefusals are the actor's answers that rest on the market's state
// rather than on a new record.
var oracleRefusals = []error{ErrMarketResolved, ErrMarketNotClosed, ErrProposalOpen, ErrNotChallengeable,
	ErrChallengeClosed, ErrSelfChallenge, ErrNotVotable, ErrPartyVote, ErrAlreadyVoted, ErrInsufficientBalance}

// submitOracle runs an oracle command and returns the proposal it left.
// A refusal waits until the state it rests on is durable, as Settle's.
func (e *Engine) submitOracle(ctx context.Context, m *market, c *command) (ProposalView, error) {
	err := e.submit(ctx, m, c)
	p := c.proposalRes
	e.putCommand(c)
	if err != nil {
		if slices.ContainsFunc(oracleRefusals, func(r error) bool { return errors.Is(err, r) }) {
			return ProposalView{}, e.refuse(ctx, m.view.Load().LSN, err)
		}
		return ProposalView{}, err
	}
	return ProposalView{Market: m.id, Proposal: p}, nil
}

// openProposal returns the market's open proposal, if any.
// Runs only on the market's owner.
func (m *market) openProposal() (Proposal, bool) {
	for i := len(m.proposals) - 1; i >= 0; i-- {
		if m.proposals[i].Status.Open() {
			return m.proposals[i], true
		}
	}
	return Proposal{}, false
}

// findProposal returns one of the market's proposals by ID.
// Runs only on the market's owner.
func (m *market) findProposal(id uuid.UUID) (Proposal, bool) {
	for _, p := range m.proposals {
		if p.ID == id {
			return p, true
		}
	}
	return Proposal{}, false
}

// holderAccounts returns the market's holders, bounded as a settlement's
// so that a notification to each fits in one record.
// Runs only on the market's owner.
func (e *Engine) holderAccounts(m *market) ([]*account, error) {
	if len(m.holders) > MaxSettleHolders {
		return nil, fmt.Errorf("%w: %d holders, at most %d", ErrTooManyHolders, len(m.holders), MaxSettleHolders)
	}
	out := make([]*account, 0, len(m.holders))
	for id := range m.holders {
		out = append(out, e.st.account(id))
	}
	return out, nil
}

// notifyAll adds the note for each account, once each, skipping those
// that turned notifications off. The accounts must be locked.
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

// propose runs on the market's goroutine.
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
	holders, err := e.holderAccounts(m)
	if err != nil {
		c.done <- err
		return
	}
	a := c.acct
	unlock := lockAccounts(append(holders, a)...)
	defer unlock()
	bond := e.cfg.OracleBond
	if a.balances[money.KP] < bond {
		c.done <- ErrInsufficientBalance
		return
	}
	p := Proposal{ID: e.ids.next(), Outcome: c.oracle.outcome, Status: ProposalProposed, Proposer: a.id,
		Bond: bond, ChallengeDeadline: now + int64(e.cfg.ChallengeWindow), CreatedAt: now}
	st := newOracleRecord(m, KindOracleProposed, now, p)
	st.payRef(a, money.KP, TxOracleBond, -bond, p.ID)
	st.notifyAll(holders, Note{Kind: NoteOracleProposed, Time: now, Market: m.id, Ref: p.ID, Outcome: p.Outcome})
	e.commitOracle(st, c, p)
}

// challenge runs on the market's goroutine.
func (e *Engine) challenge(m *market, c *command) {
	now := e.now()
	a := c.acct
	p, ok := m.findProposal(c.oracle.proposal)
	switch {
	case !ok:
		c.done <- ErrProposalNotFound
		return
	case p.Status != ProposalProposed:
		c.done <- ErrNotChallengeable
		return
	case now >= p.ChallengeDeadline:
		c.done <- ErrChallengeClosed
		return
	case a.id == p.Proposer:
		c.done <- ErrSelfChallenge
		return
	}
	holders, err := e.holderAccounts(m)
	if err != nil {
		c.done <- err
		return
	}
	proposer := e.st.account(p.Proposer)
	unlock := lockAccounts(append(holders, a, proposer)...)
	defer unlock()
	if a.balances[money.KP] < p.Bond {
		c.done <- ErrInsufficientBalance
		return
	}
	p.Status, p.Challenger, p.VoteDeadline = ProposalChallenged, a.id, now+int64(e.cfg.VoteWindow)
	st := newOracleRecord(m, KindOracleChallenge, now, p)
	st.payRef(a, money.KP, TxOracleBond, -p.Bond, p.ID)
	st.notifyAll(append([]*account{proposer}, holders...),
		Note{Kind: NoteOracleChallenged, Time: now, Market: m.id, Ref: p.ID, Outcome: p.Outcome})
	e.commitOracle(st, c, p)
}

// vote runs on the market's goroutine. A vote changes only the market, so
// it locks no account: the voter's existence was checked by the caller and
// accounts are never deleted.
func (e *Engine) vote(m *market, c *command) {
	now := e.now()
	voter := c.acct.id
	p, ok := m.findProposal(c.oracle.proposal)
	switch {
	case !ok:
		c.done <- ErrProposalNotFound
		return
	case p.Status != ProposalChallenged || now >= p.VoteDeadline:
		c.done <- ErrNotVotable
		return
	case voter == p.Proposer || voter == p.Challenger:
		c.done <- ErrPartyVote
		return
	}
	if _, done := m.voted[voteKey{p.ID, voter}]; done {
		c.done <- ErrAlreadyVoted
		return
	}
	p.Votes[c.oracle.outcome]++
	st := newOracleRecord(m, KindOracleVote, now, p)
	st.rec.Markets[0].Votes = []Vote{{Proposal: p.ID, Account: voter, Outcome: c.oracle.outcome, Time: now}}
	e.commitOracle(st, c, p)
}

// commitOracle answers c with p and commits the record, unless building it
// overflowed. Runs on the market's goroutine.
func (e *Engine) commitOracle(st *settlement, c *command, p Proposal) {
	if st.s.err != nil {
		c.done <- fmt.Errorf("core: oracle: %w", st.s.err)
		return
	}
	// c belongs to its caller again once the journal has the record.
	c.proposalRes = p
	e.commit(&st.pending, c.done, nil)
}
