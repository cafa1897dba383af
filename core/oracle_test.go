package core_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/memjournal"
)

var bond = core.DefaultOracleBond

// oracleSetup is a harness with a market past its closing time, a holder
// of yes shares, a proposer, a challenger and three voters.
type oracleSetup struct {
	*harness
	mkt                   uuid.UUID
	holder                uuid.UUID
	proposer, challenger  uuid.UUID
	voters                [3]uuid.UUID
	more                  []uuid.UUID
	proposerKP, challKP   money.Amount
	holderKP              money.Amount
	holderShares          money.Amount
	proposalID            uuid.UUID
	challengeWin, voteWin time.Duration
}

func newOracleSetup(t *testing.T) *oracleSetup { return newOracleSetupVoters(t, 0) }

// newOracleSetupVoters is newOracleSetup with n more voters (s.more),
// made before the market, as voters must be.
func newOracleSetupVoters(t *testing.T, n int) *oracleSetup {
	t.Helper()
	// A quorum the three voters' least stakes reach (the vote's weight
	// rules have tests of their own).
	h := newHarnessConfig(t, core.Config{CloseInterval: -1, UsageFlushInterval: -1, OracleInterval: -1,
		VoteQuorum: core.DefaultVoteStake, MinVoters: 1})
	s := &oracleSetup{harness: h, challengeWin: core.DefaultChallengeWindow, voteWin: core.DefaultVoteWindow}
	s.holder = h.account("holder", core.RoleSpeculator, 1000)
	s.proposer = h.account("proposer", core.RoleSpeculator, 1000)
	s.challenger = h.account("challenger", core.RoleSpeculator, 1000)
	for i, name := range []string{"voter1", "voter2", "voter3"} {
		s.voters[i] = h.account(name, core.RoleSpeculator, 10)
	}
	for i := range n {
		s.more = append(s.more, h.account(fmt.Sprintf("many%d", i), core.RoleSpeculator, 10))
	}
	s.mkt = h.market("m", 0, 1000)
	s.holderShares = money.Units(10)
	if _, err := h.buy(s.holder, s.mkt, core.Yes, s.holderShares); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(25 * time.Hour)
	s.proposerKP, s.challKP, s.holderKP = h.balance(s.proposer, money.KP), h.balance(s.challenger, money.KP), h.balance(s.holder, money.KP)
	return s
}

func (s *oracleSetup) propose(outcome core.Side) core.ProposalView {
	s.t.Helper()
	p, err := s.e.Propose(s.ctx, core.ProposeRequest{Account: s.proposer, Market: s.mkt, Outcome: outcome})
	if err != nil {
		s.t.Fatalf("propose: %v", err)
	}
	s.proposalID = p.ID
	return p
}

func (s *oracleSetup) challenge() core.ProposalView {
	s.t.Helper()
	p, err := s.e.Challenge(s.ctx, core.ChallengeRequest{Account: s.challenger, Proposal: s.proposalID})
	if err != nil {
		s.t.Fatalf("challenge: %v", err)
	}
	return p
}

func (s *oracleSetup) vote(voter uuid.UUID, outcome core.Side) {
	s.t.Helper()
	if _, err := s.e.Vote(s.ctx, core.VoteRequest{Account: voter, Proposal: s.proposalID, Outcome: outcome}); err != nil {
		s.t.Fatalf("vote: %v", err)
	}
}

// due runs the deadline check and wants n proposals decided.
func (s *oracleSetup) due(n int) {
	s.t.Helper()
	if got, err := s.e.OracleDue(s.ctx); err != nil || got != n {
		s.t.Fatalf("OracleDue = %d, %v; want %d", got, err, n)
	}
}

func (s *oracleSetup) proposal() core.ProposalView {
	s.t.Helper()
	p, err := s.e.Proposal(s.proposalID)
	if err != nil {
		s.t.Fatalf("proposal %s: %v", s.proposalID, err)
	}
	return p
}

// ledgerTypes returns an account's KP ledger entry types referring to ref,
// oldest first.
func (s *oracleSetup) ledgerTypes(acct, ref uuid.UUID) []core.TxType {
	entries, _, _ := s.e.Ledger(acct, money.KP, 0, 1000)
	var out []core.TxType
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Ref == ref {
			out = append(out, entries[i].Type)
		}
	}
	return out
}

// noteKinds returns the kinds of an account's notifications, oldest first.
func noteKinds(st *core.State, acct uuid.UUID) []core.NoteKind {
	var out []core.NoteKind
	for _, a := range st.Canonical().Accounts {
		if a.ID == acct {
			for _, n := range a.Notes {
				out = append(out, n.Kind)
			}
		}
	}
	return out
}

func hasKind(kinds []core.NoteKind, k core.NoteKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

// finish checks conservation and that a replay of the log gives the same
// state, as does a snapshot image taken now.
func (s *oracleSetup) finish() {
	s.t.Helper()
	s.check()
	requireEqual(s.t, s.replayed(), s.e.State())
	var images []*core.Record
	if _, err := s.e.State().Capture(3, func(r *core.Record) error {
		images = append(images, r.Clone())
		return nil
	}); err != nil {
		s.t.Fatal(err)
	}
	recs := s.j.Records(s.t)
	requireEqual(s.t, fromImage(s.t, images, recs, uint64(len(recs))), s.e.State())
}

// TestOracleOutcomes runs the oracle's state machine to each of its ends
// and checks the proposal, the market's resolution, where the bonds went
// (balances and ledger types) and the notifications.
func TestOracleOutcomes(t *testing.T) {
	bt := func(ts ...core.TxType) []core.TxType { return ts }
	tests := []struct {
		name      string
		proposed  core.Side
		challenge bool
		votes     []core.Side // by voters[0], [1], ...
		status    core.ProposalStatus
		settled   core.Side
		// net KP change of proposer and challenger, in bonds
		proposerNet, challengerNet int64
		proposerLedger             []core.TxType
		challengerLedger           []core.TxType
	}{
		{"undisputed", core.Yes, false, nil, core.ProposalAccepted, core.Yes, 0, 0,
			bt(core.TxOracleBond, core.TxOracleBondReturn), nil},
		{"undisputed no", core.No, false, nil, core.ProposalAccepted, core.No, 0, 0,
			bt(core.TxOracleBond, core.TxOracleBondReturn), nil},
		{"upheld by the vote", core.Yes, true, []core.Side{core.Yes, core.Yes, core.No}, core.ProposalAccepted, core.Yes, 1, -1,
			bt(core.TxOracleBond, core.TxOracleBondReturn, core.TxOracleReward), bt(core.TxOracleBond)},
		{"outvoted", core.Yes, true, []core.Side{core.No, core.Yes, core.No}, core.ProposalRejected, core.No, -1, 1,
			bt(core.TxOracleBond), bt(core.TxOracleBond, core.TxOracleBondReturn, core.TxOracleReward)},
		{"outvoted, proposal no", core.No, true, []core.Side{core.Yes}, core.ProposalRejected, core.Yes, -1, 1,
			bt(core.TxOracleBond), bt(core.TxOracleBond, core.TxOracleBondReturn, core.TxOracleReward)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newOracleSetup(t)
			p := s.propose(tt.proposed)
			if p.Status != core.ProposalProposed || p.Market != s.mkt || p.Bond != bond || p.Outcome != tt.proposed ||
				p.ChallengeDeadline != p.CreatedAt+int64(s.challengeWin) {
				t.Fatalf("proposal %+v", p)
			}
			if got := s.balance(s.proposer, money.KP); got != s.proposerKP-bond {
				t.Fatalf("proposer balance %s after proposing, want %s", got, s.proposerKP-bond)
			}
			if !hasKind(noteKinds(s.e.State(), s.holder), core.NoteOracleProposed) {
				t.Errorf("holder not told of the proposal")
			}
			deadline := s.challengeWin
			if tt.challenge {
				s.clock.Advance(time.Hour)
				c := s.challenge()
				if c.Status != core.ProposalChallenged || c.Challenger != s.challenger || c.VoteDeadline == 0 {
					t.Fatalf("challenged proposal %+v", c)
				}
				if !hasKind(noteKinds(s.e.State(), s.proposer), core.NoteOracleChallenged) ||
					!hasKind(noteKinds(s.e.State(), s.holder), core.NoteOracleChallenged) {
					t.Errorf("proposer or holder not told of the challenge")
				}
				for i, v := range tt.votes {
					s.vote(s.voters[i], v)
				}
				deadline = s.voteWin
			}
			s.clock.Advance(deadline - 2*time.Hour) // still inside every window
			s.due(0)
			s.clock.Advance(2 * time.Hour)
			s.due(1)

			got := s.proposal()
			if got.Status != tt.status || got.ResolvedAt == 0 {
				t.Errorf("status %v resolved at %d, want %v", got.Status, got.ResolvedAt, tt.status)
			}
			v, _ := s.e.Market(s.mkt)
			if v.Info.Status != core.StatusResolved || v.Info.Outcome != tt.settled {
				t.Errorf("market %v %v, want resolved %v", v.Info.Status, v.Info.Outcome, tt.settled)
			}
			if got := s.balance(s.proposer, money.KP); got != s.proposerKP+money.Amount(tt.proposerNet)*bond {
				t.Errorf("proposer balance %s, want %s%+d bonds", got, s.proposerKP, tt.proposerNet)
			}
			if got := s.balance(s.challenger, money.KP); got != s.challKP+money.Amount(tt.challengerNet)*bond {
				t.Errorf("challenger balance %s, want %s%+d bonds", got, s.challKP, tt.challengerNet)
			}
			wantHolder := s.holderKP
			if tt.settled == core.Yes {
				wantHolder += s.holderShares
			}
			if got := s.balance(s.holder, money.KP); got != wantHolder {
				t.Errorf("holder balance %s, want %s", got, wantHolder)
			}
			if got := s.ledgerTypes(s.proposer, s.proposalID); !equalTypes(got, tt.proposerLedger) {
				t.Errorf("proposer ledger %v, want %v", got, tt.proposerLedger)
			}
			if got := s.ledgerTypes(s.challenger, s.proposalID); !equalTypes(got, tt.challengerLedger) {
				t.Errorf("challenger ledger %v, want %v", got, tt.challengerLedger)
			}
			hk := noteKinds(s.e.State(), s.holder)
			if !hasKind(hk, core.NoteOracleResolved) || !hasKind(hk, core.NoteMarketSettled) {
				t.Errorf("holder notifications %v, want oracle_resolved and market_settled", hk)
			}
			if !hasKind(noteKinds(s.e.State(), s.proposer), core.NoteOracleResolved) {
				t.Errorf("proposer not told of the resolution")
			}
			s.due(0)
			s.finish()
		})
	}
}

func equalTypes(a, b []core.TxType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOracleAdminSettleCancels settles, as an admin, markets whose proposal
// is proposed, challenged or escalated by a tie (zero votes included): the
// proposal ends cancelled and every bond returns.
func TestOracleAdminSettleCancels(t *testing.T) {
	tests := []struct {
		name      string
		challenge bool
		votes     []core.Side
		before    core.ProposalStatus
	}{
		{"proposed", false, nil, core.ProposalProposed},
		{"challenged", true, []core.Side{core.Yes}, core.ProposalChallenged},
		{"escalated by a tie", true, []core.Side{core.Yes, core.No}, core.ProposalEscalated},
		{"escalated without votes", true, nil, core.ProposalEscalated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newOracleSetup(t)
			s.propose(core.Yes)
			if tt.challenge {
				s.challenge()
				for i, v := range tt.votes {
					s.vote(s.voters[i], v)
				}
			}
			if tt.before == core.ProposalEscalated {
				s.clock.Advance(s.voteWin)
				s.due(1)
				v, _ := s.e.Market(s.mkt)
				if v.Info.Status == core.StatusResolved {
					t.Fatalf("an escalated proposal resolved the market")
				}
				if got := s.balance(s.challenger, money.KP); got != s.challKP-bond {
					t.Fatalf("challenger balance %s while escalated, want the bond held", got)
				}
				s.due(0) // an escalated proposal waits for an admin
			}
			if got := s.proposal().Status; got != tt.before {
				t.Fatalf("status before settling %v, want %v", got, tt.before)
			}
			if _, err := s.e.Settle(s.ctx, core.SettleRequest{Market: s.mkt, Outcome: core.No}); err != nil {
				t.Fatal(err)
			}
			if got := s.proposal(); got.Status != core.ProposalCancelled || got.ResolvedAt == 0 {
				t.Errorf("proposal after settlement %+v, want cancelled", got)
			}
			if got := s.balance(s.proposer, money.KP); got != s.proposerKP {
				t.Errorf("proposer balance %s, want %s (bond returned)", got, s.proposerKP)
			}
			if got := s.balance(s.challenger, money.KP); got != s.challKP {
				t.Errorf("challenger balance %s, want %s", got, s.challKP)
			}
			if got := s.ledgerTypes(s.proposer, s.proposalID); !equalTypes(got, []core.TxType{core.TxOracleBond, core.TxOracleBondReturn}) {
				t.Errorf("proposer ledger %v", got)
			}
			s.finish()
		})
	}
}

// TestOracleErrors walks the refusals of propose, challenge and vote, in
// the order a market goes through them; each changes nothing.
func TestOracleErrors(t *testing.T) {
	s := newOracleSetup(t)
	h := s.harness
	open := h.market("open", 0, 1000)
	other := h.market("other", 0, 1000)
	poor := h.account("poor", core.RoleSpeculator, 1)
	s.propose(core.Yes)
	propose := func(acct, mkt uuid.UUID, o core.Side) func() error {
		return func() error {
			_, err := s.e.Propose(s.ctx, core.ProposeRequest{Account: acct, Market: mkt, Outcome: o})
			return err
		}
	}
	challenge := func(acct uuid.UUID, p *uuid.UUID) func() error {
		return func() error {
			_, err := s.e.Challenge(s.ctx, core.ChallengeRequest{Account: acct, Proposal: *p})
			return err
		}
	}
	vote := func(acct uuid.UUID, p *uuid.UUID, o core.Side) func() error {
		return func() error {
			_, err := s.e.Vote(s.ctx, core.VoteRequest{Account: acct, Proposal: *p, Outcome: o})
			return err
		}
	}
	unknown := uuid.New()
	pid := &s.proposalID
	var otherID uuid.UUID
	steps := []struct {
		name  string
		do    func() error
		want  error  // nil with fld empty: success
		fld   string // a field error on it
		after func()
	}{
		{"bad outcome", propose(s.proposer, s.mkt, 2), nil, "outcome", nil},
		{"unknown market", propose(s.proposer, uuid.New(), core.Yes), core.ErrMarketNotFound, "", nil},
		{"unknown account", propose(uuid.New(), s.mkt, core.Yes), core.ErrAccountNotFound, "", nil},
		{"house proposes", propose(core.HouseID, s.mkt, core.Yes), core.ErrAccountNotFound, "", nil},
		{"proposal already open", propose(s.challenger, s.mkt, core.No), core.ErrProposalOpen, "", nil},
		{"market still open", propose(s.proposer, open, core.Yes), core.ErrMarketNotClosed, "",
			func() { h.clock.Advance(24 * time.Hour) }},
		{"bond not covered", propose(poor, other, core.Yes), core.ErrInsufficientBalance, "", nil},
		{"unknown proposal", challenge(s.challenger, &unknown), core.ErrProposalNotFound, "", nil},
		// The first market's window is over by now; the other's is fresh.
		{"challenge window closed", challenge(s.challenger, pid), core.ErrChallengeClosed, "", nil},
		{"other proposed", func() error {
			p, err := s.e.Propose(s.ctx, core.ProposeRequest{Account: s.proposer, Market: other, Outcome: core.No})
			otherID = p.ID
			return err
		}, nil, "", func() { *pid = otherID }},
		{"vote before a challenge", vote(s.voters[0], pid, core.Yes), core.ErrNotVotable, "", nil},
		{"own proposal", challenge(s.proposer, pid), core.ErrSelfChallenge, "", nil},
		{"challenge not covered", challenge(poor, pid), core.ErrInsufficientBalance, "", nil},
		{"challenged", challenge(s.challenger, pid), nil, "", nil},
		{"challenged twice", challenge(s.voters[0], pid), core.ErrNotChallengeable, "", nil},
		{"proposer votes", vote(s.proposer, pid, core.Yes), core.ErrPartyVote, "", nil},
		{"challenger votes", vote(s.challenger, pid, core.Yes), core.ErrPartyVote, "", nil},
		{"bad vote outcome", vote(s.voters[0], pid, 7), nil, "outcome", nil},
		{"vote of an unknown account", vote(uuid.New(), pid, core.Yes), core.ErrAccountNotFound, "", nil},
		{"voted", vote(s.voters[0], pid, core.Yes), nil, "", nil},
		{"voted twice", vote(s.voters[0], pid, core.No), core.ErrAlreadyVoted, "", func() { h.clock.Advance(s.voteWin) }},
		{"vote after its deadline", vote(s.voters[1], pid, core.Yes), core.ErrNotVotable, "", nil},
		{"settled", func() error {
			_, err := s.e.Settle(s.ctx, core.SettleRequest{Market: s.mkt, Outcome: core.Yes})
			return err
		}, nil, "", nil},
		{"resolved market", propose(s.proposer, s.mkt, core.Yes), core.ErrMarketResolved, "", nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before := h.e.State().Canonical()
			err := st.do()
			switch {
			case st.fld != "":
				var fe *core.FieldError
				if !errors.As(err, &fe) || fe.Field != st.fld {
					t.Fatalf("got %v, want a field error on %q", err, st.fld)
				}
			case st.want == nil:
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
			case !errors.Is(err, st.want):
				t.Fatalf("got %v, want %v", err, st.want)
			}
			if st.want != nil || st.fld != "" {
				requireEqualRecords(t, h.e.State().Canonical(), before)
			}
			if st.after != nil {
				st.after()
			}
		})
	}
	s.finish()
}

// TestOracleDeadlinePassedWhileDown rebuilds an engine from the log alone,
// with a clock past the proposal's deadline, as a restart after downtime
// does: the deadline is applied at start, without a call to OracleDue.
func TestOracleDeadlinePassedWhileDown(t *testing.T) {
	tests := []struct {
		name      string
		challenge bool
		status    core.ProposalStatus
	}{
		{"challenge window passed", false, core.ProposalAccepted},
		{"vote passed", true, core.ProposalRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newOracleSetup(t)
			s.propose(core.Yes)
			if tt.challenge {
				s.challenge()
				s.vote(s.voters[0], core.No)
			}
			s.e.Close()
			recs := s.j.Records(t)
			st := s.replayed()

			j := memjournal.NewAfter(uint64(len(recs)))
			clk := newClock()
			clk.Set(s.clock.Now().Add(s.voteWin + time.Minute))
			e := core.NewEngine(st, j, core.Config{Now: clk.Now, CloseInterval: -1, UsageFlushInterval: -1,
				OracleInterval: time.Hour, VoteQuorum: core.DefaultVoteStake, MinVoters: 1})
			j.WaitUntil(func(js memjournal.State) bool { return len(js.Records) > 0 })
			e.Close()
			p, err := e.Proposal(s.proposalID)
			if err != nil || p.Status != tt.status {
				t.Fatalf("after restart: %+v, %v; want %v", p, err, tt.status)
			}
			if v, _ := e.Market(s.mkt); v.Info.Status != core.StatusResolved {
				t.Fatalf("market %v after restart, want resolved", v.Info.Status)
			}
			if err := st.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestOracleDueCountsWhatItApplied: two calls of OracleDue that both find a
// proposal past its challenge window apply it once between them, and only
// the one that applied it counts it. It failed before: each call returned
// how many it found due, 1 and 1.
func TestOracleDueCountsWhatItApplied(t *testing.T) {
	s := newOracleSetup(t)
	s.propose(core.Yes)
	s.clock.Advance(s.challengeWin)
	total := countBothStalled(t, s.j, s.e, s.mkt, func() (int, error) { return s.e.OracleDue(s.ctx) })
	if total != 1 {
		t.Fatalf("the two OracleDue calls counted %d deadlines, want 1", total)
	}
	if got := s.proposal().Status; got != core.ProposalAccepted {
		t.Fatalf("proposal %v, want accepted", got)
	}
}
