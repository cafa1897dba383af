package transport

import (
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/core/money"
	"marketd/transport/strictjson"
	"marketd/transport/wire"
)

// The oracle's endpoints (docs/API.md, "The oracle"): propose, challenge and
// vote answer the proposal as it stands after the change; status answers
// a proposal, or a market's latest.

// marketOutcome is the body of the requests that name a market and an
// outcome: an oracle proposal and an admin's settlement.
type marketOutcome struct {
	MarketID *string `json:"market_id"`
	Outcome  *string `json:"outcome"`
}

// parse reads the market and the outcome, both required.
func (b *marketOutcome) parse() (uuid.UUID, core.Side, error) {
	market, err := requiredUUID("market_id", b.MarketID)
	if err != nil {
		return market, 0, err
	}
	outcome, err := parseSide("outcome", b.Outcome)
	return market, outcome, err
}

type challengeRequest struct {
	ProposalID *string `json:"proposal_id"`
}

type voteRequest struct {
	ProposalID *string           `json:"proposal_id"`
	Outcome    *string           `json:"outcome"`
	Stake      strictjson.Number `json:"stake"`
}

// stakeAmounts are a proposal's vote stakes per outcome.
type stakeAmounts struct {
	Yes money.Amount `json:"yes"`
	No  money.Amount `json:"no"`
}

type voteCounts struct {
	Yes uint64 `json:"yes"`
	No  uint64 `json:"no"`
}

// proposalJSON is the proposal object (docs/API.md, "The proposal object").
type proposalJSON struct {
	ID                uuid.UUID       `json:"id"`
	MarketID          uuid.UUID       `json:"market_id"`
	Outcome           string          `json:"outcome"`
	Status            string          `json:"status"`
	ProposerID        uuid.UUID       `json:"proposer_id"`
	ChallengerID      *uuid.UUID      `json:"challenger_id"`
	Bond              money.Amount    `json:"bond"`
	Votes             voteCounts      `json:"votes"`
	Stakes            stakeAmounts    `json:"stakes"`
	ChallengeDeadline wire.Timestamp  `json:"challenge_deadline"`
	VoteDeadline      *wire.Timestamp `json:"vote_deadline"`
	CreatedAt         wire.Timestamp  `json:"created_at"`
	ResolvedAt        *wire.Timestamp `json:"resolved_at"`
}

func proposalOf(p core.ProposalView) proposalJSON {
	out := proposalJSON{
		ID:                p.ID,
		MarketID:          p.Market,
		Outcome:           p.Outcome.String(),
		Status:            p.Status.String(),
		ProposerID:        p.Proposer,
		Bond:              p.Bond,
		Votes:             voteCounts{Yes: p.Votes[core.Yes], No: p.Votes[core.No]},
		Stakes:            stakeAmounts{Yes: p.Stakes[core.Yes], No: p.Stakes[core.No]},
		ChallengeDeadline: wire.Timestamp(p.ChallengeDeadline),
		VoteDeadline:      wire.OptionalTime(p.VoteDeadline),
		CreatedAt:         wire.Timestamp(p.CreatedAt),
		ResolvedAt:        wire.OptionalTime(p.ResolvedAt),
	}
	if p.Challenger != uuid.Nil {
		id := p.Challenger
		out.ChallengerID = &id
	}
	return out
}

func (s *Server) propose(ctx *fasthttp.RequestCtx, c *caller, body *marketOutcome) error {
	market, outcome, err := body.parse()
	if err != nil {
		return err
	}
	return respond(ctx, fasthttp.StatusOK, proposalOf)(s.eng.Propose(ctx, core.ProposeRequest{Account: c.account, Market: market, Outcome: outcome}))
}

func (s *Server) challenge(ctx *fasthttp.RequestCtx, c *caller, body *challengeRequest) error {
	req := core.ChallengeRequest{Account: c.account}
	var err error
	if req.Proposal, err = requiredUUID("proposal_id", body.ProposalID); err != nil {
		return err
	}
	return respond(ctx, fasthttp.StatusOK, proposalOf)(s.eng.Challenge(ctx, req))
}

func (s *Server) vote(ctx *fasthttp.RequestCtx, c *caller, body *voteRequest) error {
	req := core.VoteRequest{Account: c.account}
	var err error
	if req.Proposal, err = requiredUUID("proposal_id", body.ProposalID); err != nil {
		return err
	}
	if req.Outcome, err = parseSide("outcome", body.Outcome); err != nil {
		return err
	}
	// stake is optional: the least stake when omitted (docs/API.md, "The
	// oracle"); its lower bound is the engine's to check.
	if body.Stake.Set() {
		if req.Stake, err = positiveAmount("stake", body.Stake); err != nil {
			return err
		}
	}
	return respond(ctx, fasthttp.StatusOK, proposalOf)(s.eng.Vote(ctx, req))
}

// oracleStatus answers GET /api/oracle/status: exactly one of market_id
// (the market's latest proposal) and proposal_id.
func (s *Server) oracleStatus(ctx *fasthttp.RequestCtx, _ *caller) error {
	args := ctx.QueryArgs()
	market, proposal := args.Peek("market_id"), args.Peek("proposal_id")
	switch {
	case market != nil && proposal != nil:
		return fieldError("proposal_id", "give market_id or proposal_id, not both")
	case market != nil:
		id, err := strictjson.UUID("market_id", string(market))
		if err != nil {
			return err
		}
		return respond(ctx, fasthttp.StatusOK, proposalOf)(s.eng.LatestProposal(id))
	case proposal != nil:
		id, err := strictjson.UUID("proposal_id", string(proposal))
		if err != nil {
			return err
		}
		return respond(ctx, fasthttp.StatusOK, proposalOf)(s.eng.Proposal(id))
	}
	return fieldError("market_id", "market_id or proposal_id is required")
}
