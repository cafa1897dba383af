package core

import (
	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/internal/enum"
)

// ProposalStatus is where an oracle proposal stands (docs/API.md, "The
// oracle"). Values are written to disk.
type ProposalStatus uint8

// The proposal statuses: proposed -> accepted (undisputed past its window)
// or challenged -> accepted, rejected (by the vote) or escalated (a tie, for
// an admin); an admin settlement cancels any open one.
const (
	ProposalProposed   ProposalStatus = 1
	ProposalChallenged ProposalStatus = 2
	ProposalAccepted   ProposalStatus = 3
	ProposalRejected   ProposalStatus = 4
	ProposalEscalated  ProposalStatus = 5
	ProposalCancelled  ProposalStatus = 6
)

var proposalStatusNames = enum.New[ProposalStatus]("proposal_status", []string{
	ProposalProposed:   "proposed",
	ProposalChallenged: "challenged",
	ProposalAccepted:   "accepted",
	ProposalRejected:   "rejected",
	ProposalEscalated:  "escalated",
	ProposalCancelled:  "cancelled",
})

// String returns the wire name of the status.
func (s ProposalStatus) String() string { return proposalStatusNames.Name(s) }

// Valid reports whether s is a known status.
func (s ProposalStatus) Valid() bool { return proposalStatusNames.Valid(s) }

// Open reports whether a proposal in status s still holds bonds: proposed,
// challenged or escalated.
func (s ProposalStatus) Open() bool {
	return s == ProposalProposed || s == ProposalChallenged || s == ProposalEscalated
}

// Proposal is an oracle proposal to resolve a market. Its bonds are KP
// held outside every account while it is open; the conservation invariant
// counts them.
type Proposal struct {
	ID                uuid.UUID
	Outcome           Side
	Status            ProposalStatus
	Proposer          uuid.UUID
	Challenger        uuid.UUID // Nil until challenged
	Bond              money.Amount
	Votes             [NumSides]uint64
	ChallengeDeadline int64 // Unix nanoseconds
	VoteDeadline      int64 // 0 until challenged
	CreatedAt         int64
	ResolvedAt        int64 // 0 while open
	// Format 3 (wave 2): vote stakes (docs/API.md, "The oracle").
	// Stakes are the KP locked by the votes, per outcome. Once the
	// proposal is decided, escalated or cancelled, the stakes are paid out
	// in bounded records (KindOracleStakes): StakeCursor counts the
	// proposal's votes paid so far, in vote order, and StakesPaid the KP
	// paid. The stakes not yet paid are held outside every account.
	Stakes      [NumSides]money.Amount
	StakeCursor uint64
	StakesPaid  money.Amount
}

// HeldBonds returns the KP the proposal holds: one bond while proposed, two
// once challenged, none once closed.
func (p *Proposal) HeldBonds() money.Amount {
	switch p.Status {
	case ProposalProposed:
		return p.Bond
	case ProposalChallenged, ProposalEscalated:
		return 2 * p.Bond
	}
	return 0
}

// HeldStakes returns the KP of vote stakes the proposal holds: locked by
// the votes and not paid out yet.
func (p *Proposal) HeldStakes() money.Amount {
	return p.Stakes[Yes] + p.Stakes[No] - p.StakesPaid
}

// Vote is one account's vote on a challenged proposal.
type Vote struct {
	Proposal uuid.UUID
	Account  uuid.UUID
	Outcome  Side
	Time     int64
	Stake    money.Amount // format 3: the KP the vote locks; 0 for votes before stakes
}

// voteKey names an account's vote on a proposal.
type voteKey struct{ proposal, account uuid.UUID }

// applyOracle applies a change's proposals and votes. Proposals are
// replaced, never changed in place, because published views share them.
// Runs on the market's goroutine.
func (m *market) applyOracle(ch *MarketChange) {
	if len(ch.Proposals) > 0 {
		ps := make([]Proposal, len(m.proposals), len(m.proposals)+len(ch.Proposals))
		copy(ps, m.proposals)
		for _, p := range ch.Proposals {
			replaced := false
			for i := range ps {
				if ps[i].ID == p.ID {
					ps[i], replaced = p, true
					break
				}
			}
			if !replaced {
				ps = append(ps, p)
			}
		}
		m.proposals = ps
	}
	for _, v := range ch.Votes {
		if m.voted == nil {
			m.voted = make(map[voteKey]struct{})
		}
		m.voted[voteKey{v.Proposal, v.Account}] = struct{}{}
		m.votes = append(m.votes, v)
	}
}

// OpenProposal returns the market's open proposal, if any: there is at
// most one.
func (v *MarketView) OpenProposal() (Proposal, bool) { return openIn(v.Proposals) }

// openIn returns the open proposal of a market's proposals, newest first.
func openIn(ps []Proposal) (Proposal, bool) {
	for i := len(ps) - 1; i >= 0; i-- {
		if ps[i].Status.Open() {
			return ps[i], true
		}
	}
	return Proposal{}, false
}

// LatestProposal returns the market's newest proposal, if any.
func (v *MarketView) LatestProposal() (Proposal, bool) {
	if len(v.Proposals) == 0 {
		return Proposal{}, false
	}
	return v.Proposals[len(v.Proposals)-1], true
}
