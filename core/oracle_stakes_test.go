package core_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/memjournal"
)

// stakeMarket is a harness with a closed market whose outcome is
// proposed (yes) and challenged, ready for votes.
type stakeMarket struct {
	*harness
	mkt, proposal        uuid.UUID
	proposer, challenger uuid.UUID
}

func newStakeMarket(t *testing.T, cfg core.Config, voters []uuid.UUID, setup func(h *harness, mkt uuid.UUID)) (*stakeMarket, []uuid.UUID) {
	t.Helper()
	cfg.CloseInterval, cfg.UsageFlushInterval = -1, -1
	h := newHarnessConfig(t, cfg)
	s := &stakeMarket{harness: h}
	s.proposer = h.account("proposer", core.RoleSpeculator, 1000)
	s.challenger = h.account("challenger", core.RoleSpeculator, 1000)
	for i := range cap(voters) {
		voters = append(voters, h.account(fmt.Sprintf("voter%d", i), core.RoleSpeculator, 100_000))
	}
	s.mkt = h.market("m", 0, 1000)
	if setup != nil {
		setup(h, s.mkt)
	}
	h.clock.Advance(25 * time.Hour)
	p, err := h.e.Propose(h.ctx, core.ProposeRequest{Account: s.proposer, Market: s.mkt, Outcome: core.Yes})
	if err != nil {
		t.Fatal(err)
	}
	s.proposal = p.ID
	if _, err := h.e.Challenge(h.ctx, core.ChallengeRequest{Account: s.challenger, Proposal: p.ID}); err != nil {
		t.Fatal(err)
	}
	return s, voters
}

func (s *stakeMarket) vote(voter uuid.UUID, side core.Side, stake money.Amount) error {
	_, err := s.e.Vote(s.ctx, core.VoteRequest{Account: voter, Proposal: s.proposal, Outcome: side, Stake: stake})
	return err
}

func (s *stakeMarket) endVote() core.ProposalView {
	s.t.Helper()
	s.clock.Advance(core.DefaultVoteWindow + time.Minute)
	if _, err := s.e.OracleDue(s.ctx); err != nil {
		s.t.Fatal(err)
	}
	// The deadline answered once its payouts were durable; a vote now is
	// refused.
	if _, err := s.e.Vote(s.ctx, core.VoteRequest{Account: s.proposer, Proposal: s.proposal, Outcome: core.Yes}); err == nil {
		s.t.Fatal("a vote after the deadline was taken")
	}
	p, err := s.e.Proposal(s.proposal)
	if err != nil {
		s.t.Fatal(err)
	}
	return p
}

// TestOracleFreshAccountsCannotBuyTheOutcome is the attack of docs/API.md,
// "The oracle": a challenger registers a few hundred fresh accounts and
// votes with them. Accounts made after the market cannot vote; and
// accounts made before it, at the least stake each, are far below the
// quorum, so the proposal escalates to the admin and the market stays
// unsettled. Before vote stakes, every free vote counted and settled the
// market (fresh accounts included).
func TestOracleFreshAccountsCannotBuyTheOutcome(t *testing.T) {
	s, old := newStakeMarket(t, core.Config{}, make([]uuid.UUID, 0, 20), nil)
	for i := range 300 {
		fresh := s.account(fmt.Sprintf("sybil%d", i), core.RoleSpeculator, 1000)
		_, err := s.e.Vote(s.ctx, core.VoteRequest{Account: fresh, Proposal: s.proposal, Outcome: core.No})
		if err == nil {
			t.Fatalf("vote %d by an account made after the market taken", i)
		}
		requireVoterTooNew(t, err)
	}
	for _, v := range old {
		if _, err := s.e.Vote(s.ctx, core.VoteRequest{Account: v, Proposal: s.proposal, Outcome: core.No}); err != nil {
			t.Fatal(err)
		}
	}
	p := s.endVote()
	if v, _ := s.e.Market(s.mkt); p.Status != core.ProposalEscalated || v.Info.Status == core.StatusResolved {
		t.Fatalf("20 votes of the least stake (%s in all, quorum %s): proposal %v, market %v; want escalated, unresolved",
			20*core.DefaultVoteStake, core.DefaultVoteQuorum, p.Status, v.Info.Status)
	}
	for _, v := range old {
		if got := s.balance(v, money.KP); got != money.Units(100_000) {
			t.Fatalf("voter %s has %s after the escalation, want its stake back", v, got)
		}
	}
	s.check()
}

func requireVoterTooNew(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, core.ErrVoterTooNew) {
		t.Fatalf("vote by an account made after the market: %v, want ErrVoterTooNew", err)
	}
}

// TestOracleUSDCBookEscalates: a vote in KP, free at signup, never settles
// a market with a USDC book, whatever its weight.
func TestOracleUSDCBookEscalates(t *testing.T) {
	s, voters := newStakeMarket(t, core.Config{VoteQuorum: core.DefaultVoteStake, MinVoters: 1}, make([]uuid.UUID, 0, 5),
		func(h *harness, mkt uuid.UUID) {
			a := h.account("usdc_trader", core.RoleSpeculator, 0)
			h.link(a, walletA)
			h.deposit(a, 100, txHash(1))
			if _, err := h.e.Trade(h.ctx, core.TradeRequest{Account: a, Market: mkt, Currency: money.USDC, Side: core.Yes, Shares: money.Units(10)}); err != nil {
				t.Fatal(err)
			}
		})
	for _, v := range voters {
		if err := s.vote(v, core.No, money.Units(5000)); err != nil {
			t.Fatal(err)
		}
	}
	if p := s.endVote(); p.Status != core.ProposalEscalated {
		t.Fatalf("a KP vote on a market with a USDC book: %v, want escalated", p.Status)
	}
	s.check()
}

// TestOracleStakesPaidInBoundedRecords decides a vote and checks each
// voter's payout: the losers' stakes shared among the winners pro rata,
// rounded down, the rest to the house; paid two voters a record.
func TestOracleStakesPaidInBoundedRecords(t *testing.T) {
	s, voters := newStakeMarket(t, core.Config{VoteQuorum: money.Units(100), MinVoters: 3, StepAccounts: 2}, make([]uuid.UUID, 0, 5), nil)
	stakes := []money.Amount{money.Units(10), money.Units(20), money.Amount(33_333_333), money.Units(40), money.Units(12)}
	sides := []core.Side{core.No, core.No, core.No, core.Yes, core.Yes}
	for i, v := range voters {
		if err := s.vote(v, sides[i], stakes[i]); err != nil {
			t.Fatal(err)
		}
		s.check()
	}
	before := len(s.j.Records(t))
	p := s.endVote()
	if p.Status != core.ProposalRejected || p.Stakes != [2]money.Amount{money.Units(52), money.Amount(63_333_333)} || p.HeldStakes() != 0 {
		t.Fatalf("proposal %+v: want rejected (no outweighs yes), every stake paid", p)
	}
	var won, lost, paid money.Amount = p.Stakes[core.No], p.Stakes[core.Yes], 0
	for i, v := range voters {
		got := s.balance(v, money.KP) - money.Units(100_000)
		want := -stakes[i]
		if sides[i] == core.No {
			share, _ := stakes[i].MulDivFloor(lost, won)
			want = share
			paid += stakes[i] + share
		}
		if got != want {
			t.Errorf("voter %d (%v, stake %s): net %s, want %s", i, sides[i], stakes[i], got, want)
		}
	}
	var rest money.Amount // the house's entries on the proposal
	entries, _, _ := s.e.Ledger(core.HouseID, money.KP, 0, 100)
	for _, e := range entries {
		if e.Ref == s.proposal {
			rest += e.Amount
		}
	}
	if rest != won+lost-paid || rest < 0 || rest >= 3 {
		t.Errorf("house took %s of the rounding, want %s (under a micro-unit per winner)", rest, won+lost-paid)
	}
	// One settlement record, then the payouts: three winners and two
	// losers, two voters a record.
	kinds := map[core.Kind]int{}
	for _, r := range s.j.Records(t)[before:] {
		kinds[r.Kind]++
	}
	if kinds[core.KindOracleStakes] != 3 {
		t.Errorf("records after the deadline %v: want 3 of stake payouts", kinds)
	}
	s.check()
	requireEqual(t, s.replayed(), s.e.State())
}

// TestOracleStakePayoutsResume cuts the log after each stake payout record
// and restarts on it: the payouts resume after the last one and every
// voter ends as in the uninterrupted run.
func TestOracleStakePayoutsResume(t *testing.T) {
	cfg := core.Config{VoteQuorum: money.Units(30), MinVoters: 2, StepAccounts: 1}
	s, voters := newStakeMarket(t, cfg, make([]uuid.UUID, 0, 4), nil)
	for i, v := range voters {
		if err := s.vote(v, core.Side(i%2), money.Units(int64(10+i))); err != nil {
			t.Fatal(err)
		}
	}
	s.endVote()
	want := s.e.State().Canonical()
	recs := s.j.Records(t)
	cuts := 0
	for n := range recs {
		if recs[n].Kind != core.KindOracleStakes {
			continue
		}
		st := core.NewState()
		for i, r := range recs[:n] {
			if err := st.Apply(uint64(i+1), r); err != nil {
				t.Fatal(err)
			}
		}
		j := memjournal.NewAfter(uint64(n))
		c := cfg
		c.Now, c.CloseInterval, c.UsageFlushInterval, c.OracleInterval = s.clock.Now, -1, -1, -1
		e := core.NewEngine(st, j, c)
		e.Close()
		got := e.State().Canonical()
		for _, v := range append(voters, core.HouseID) {
			if g, w := balanceIn(got, v), balanceIn(want, v); g != w {
				t.Errorf("cut before record %d: account %s ends with %s, want %s", n+1, v, g, w)
			}
		}
		if err := e.State().Check(); err != nil {
			t.Fatalf("cut before record %d: %v", n+1, err)
		}
		cuts++
	}
	if cuts != 4 {
		t.Fatalf("%d stake payout records, want 4 (one voter each)", cuts)
	}
}

func balanceIn(image *core.Record, id uuid.UUID) money.Amount {
	for _, a := range image.Accounts {
		if a.ID == id {
			for _, b := range a.Balances {
				if b.Currency == money.KP {
					return b.After
				}
			}
		}
	}
	return 0
}

// TestPropertyVoteStakes runs random votes (random stakes, sides, quorums
// and voter counts; seeded PCG) to their deadline and checks the rules:
// a decision only with the quorum, the voters and no tie, for the side of
// the larger stake; losers lose their stake, winners gain a pro rata share
// of the losers' (never more), escalations return every stake; the
// invariant checker after every vote and at the end.
func TestPropertyVoteStakes(t *testing.T) {
	const seed = 0x5ca1e
	r := rand.New(rand.NewPCG(seed, seed))
	rounds := propertySequences / 2
	votes := 0
	for round := range rounds {
		n := 1 + r.IntN(8)
		cfg := core.Config{VoteQuorum: money.Units(1 + r.Int64N(200)), MinVoters: 1 + r.IntN(6), StepAccounts: 1 + r.IntN(4)}
		s, voters := newStakeMarket(t, cfg, make([]uuid.UUID, 0, n), nil)
		stakes := make([]money.Amount, n)
		sides := make([]core.Side, n)
		var total [2]money.Amount
		for i, v := range voters {
			stakes[i] = core.DefaultVoteStake + money.Amount(r.Int64N(int64(money.Units(50))))
			sides[i] = core.Side(r.IntN(2))
			if err := s.vote(v, sides[i], stakes[i]); err != nil {
				t.Fatalf("seed %#x round %d: %v", seed, round, err)
			}
			total[sides[i]] += stakes[i]
			votes++
			s.check()
		}
		p := s.endVote()
		decides := total[0] != total[1] && total[0]+total[1] >= cfg.VoteQuorum && n >= cfg.MinVoters
		won := core.No
		if total[core.Yes] > total[core.No] {
			won = core.Yes
		}
		wantStatus := core.ProposalEscalated
		if decides && won == core.Yes {
			wantStatus = core.ProposalAccepted
		} else if decides {
			wantStatus = core.ProposalRejected
		}
		if p.Status != wantStatus {
			t.Fatalf("seed %#x round %d: stakes %v, quorum %s, %d of %d voters: %v, want %v",
				seed, round, total, cfg.VoteQuorum, n, cfg.MinVoters, p.Status, wantStatus)
		}
		for i, v := range voters {
			net := s.balance(v, money.KP) - money.Units(100_000)
			switch {
			case !decides && net != 0:
				t.Fatalf("seed %#x round %d: voter %d nets %s after an escalation", seed, round, i, net)
			case decides && sides[i] != won && net != -stakes[i]:
				t.Fatalf("seed %#x round %d: loser %d nets %s, want -%s", seed, round, i, net, stakes[i])
			case decides && sides[i] == won && (net < 0 || net > total[1-won]):
				t.Fatalf("seed %#x round %d: winner %d nets %s of a losing pool of %s", seed, round, i, net, total[1-won])
			}
		}
		s.check()
	}
	t.Logf("seed %#x: %d rounds, %d votes, the checker after each vote and round", seed, rounds, votes)
}

// TestOracleSettleAnswersAfterStakes holds the answers of docs/API.md
// ("POST /api/admin/settle": the answer comes once the last step is
// durable; "The oracle": the stake payouts): the admin's settlement of a
// challenged market cancels its proposal, and every vote stake is back in
// its voter's account, in the state and in the log, by the time Settle
// answers, though the payouts take one record per voter. Before, the
// answer came with the settlement's record and the payouts went on after
// it, so a reader saw the proposals change after the answer.
func TestOracleSettleAnswersAfterStakes(t *testing.T) {
	const stake = 10
	s, voters := newStakeMarket(t, core.Config{VoteQuorum: money.Units(1_000_000), MinVoters: 1, StepAccounts: 1},
		make([]uuid.UUID, 0, 64), nil)
	before := make([]money.Amount, len(voters))
	for i, v := range voters {
		before[i] = s.balance(v, money.KP)
		if err := s.vote(v, core.Side(i%2), money.Units(stake)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.e.Settle(s.ctx, core.SettleRequest{Market: s.mkt, Outcome: core.No}); err != nil {
		t.Fatal(err)
	}
	for i, v := range voters {
		if got := s.balance(v, money.KP); got != before[i] {
			t.Errorf("voter %d holds %s KP when Settle answers, want %s (its stake of %d returned)", i, got, before[i], stake)
		}
	}
	recs := s.j.Records(t)
	paid := 0
	for _, r := range recs {
		if r.Kind == core.KindOracleStakes {
			paid++
		}
	}
	if paid != len(voters) {
		t.Errorf("%d stake payout records in the log when Settle answers, want %d (one voter each)", paid, len(voters))
	}
	if err := s.e.State().Check(); err != nil {
		t.Fatal(err)
	}
}
