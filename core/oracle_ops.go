package core

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"

	"marketd/core/money"
)

// Defaults of the oracle (docs/API.md, "The oracle").
const (
	// DefaultOracleBond is the KP a proposal, and a challenge, hold.
	DefaultOracleBond = money.Amount(100 * money.Scale)
	// DefaultChallengeWindow is how long a proposal may be challenged.
	DefaultChallengeWindow = 2 * time.Hour
	// DefaultVoteWindow is how long a challenged proposal takes votes.
	DefaultVoteWindow = 24 * time.Hour
	// DefaultVoteStake is the least stake of a vote, and the stake of a
	// vote that names none.
	DefaultVoteStake = money.Amount(10 * money.Scale)
	// DefaultVoteQuorum is the stake a vote needs in all to decide.
	DefaultVoteQuorum = money.Amount(10_000 * money.Scale)
	// DefaultMinVoters is the number of voters a vote needs to decide.
	DefaultMinVoters = 5
	// MaxVotesPerProposal bounds the votes on one proposal: each is kept
	// in the market's state and paid in the proposal's stake records.
	MaxVotesPerProposal = 100_000
)

// oracleDefaults fills the oracle's zero settings with their defaults.
func (cfg *Config) oracleDefaults() {
	cfg.OracleBond = positiveOr(cfg.OracleBond, DefaultOracleBond)
	cfg.ChallengeWindow = positiveOr(cfg.ChallengeWindow, DefaultChallengeWindow)
	cfg.VoteWindow = positiveOr(cfg.VoteWindow, DefaultVoteWindow)
	cfg.VoteStake = positiveOr(cfg.VoteStake, DefaultVoteStake)
	cfg.VoteQuorum = positiveOr(cfg.VoteQuorum, DefaultVoteQuorum)
	cfg.MinVoters = positiveOr(cfg.MinVoters, DefaultMinVoters)
	cfg.OracleInterval = cmp.Or(cfg.OracleInterval, time.Second)
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

// VoteRequest votes on a challenged proposal, locking Stake KP of the
// voter (docs/API.md, "The oracle"); 0 means the least stake,
// Config.VoteStake.
type VoteRequest struct {
	Account  uuid.UUID
	Proposal uuid.UUID
	Outcome  Side
	Stake    money.Amount
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
	stake    money.Amount
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
	return e.submitOracle(ctx, opPropose, m, a, oracleRequest{outcome: req.Outcome})
}

// Challenge challenges a proposal, holding an equal bond from the
// challenger, and opens its vote.
func (e *Engine) Challenge(ctx context.Context, req ChallengeRequest) (ProposalView, error) {
	m, a, err := e.proposalAndAccount(req.Proposal, req.Account)
	if err != nil {
		return ProposalView{}, err
	}
	return e.submitOracle(ctx, opChallenge, m, a, oracleRequest{proposal: req.Proposal})
}

// Vote records an account's vote on a challenged proposal.
func (e *Engine) Vote(ctx context.Context, req VoteRequest) (ProposalView, error) {
	if req.Outcome != Yes && req.Outcome != No {
		return ProposalView{}, fieldErr("outcome", "must be yes or no")
	}
	stake := req.Stake
	switch {
	case stake == 0:
		stake = e.cfg.VoteStake
	case stake < e.cfg.VoteStake || stake > MaxAmount:
		return ProposalView{}, fieldErr("stake", "must be from %s to 1e9", e.cfg.VoteStake)
	}
	m, a, err := e.proposalAndAccount(req.Proposal, req.Account)
	if err != nil {
		return ProposalView{}, err
	}
	return e.submitOracle(ctx, opVote, m, a, oracleRequest{proposal: req.Proposal, outcome: req.Outcome, stake: stake})
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
	ErrChallengeClosed, ErrSelfChallenge, ErrNotVotable, ErrPartyVote, ErrAlreadyVoted, ErrInsufficientBalance,
	ErrVoterTooNew, ErrVoteLimit}

// submitOracle runs the oracle command op of account a on market m and
// returns the proposal it left. A refusal waits until the state it rests on
// is durable, as a trade's (refuseOn): the market's, and the acting
// account's, whose balance a bond or a stake needs.
func (e *Engine) submitOracle(ctx context.Context, op opKind, m *market, a *account, req oracleRequest) (ProposalView, error) {
	c := e.getCommand(op)
	c.acct, c.oracle = a, req
	c.idem = idemCallOf(ctx)
	err := e.submit(ctx, m, c)
	p := c.proposalRes
	e.putCommand(c)
	if err != nil {
		if slices.ContainsFunc(oracleRefusals, func(r error) bool { return errors.Is(err, r) }) {
			return ProposalView{}, e.refuseOn(ctx, m, a, err)
		}
		return ProposalView{}, err
	}
	return ProposalView{Market: m.id, Proposal: p}, nil
}
