package transport

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// proposalOut is the proposal object as a client decodes it.
type proposalOut struct {
	ID                string       `json:"id"`
	MarketID          string       `json:"market_id"`
	Outcome           string       `json:"outcome"`
	Status            string       `json:"status"`
	ProposerID        string       `json:"proposer_id"`
	ChallengerID      *string      `json:"challenger_id"`
	Bond              money.Amount `json:"bond"`
	Votes             struct{ Yes, No uint64 }
	Stakes            struct{ Yes, No money.Amount }
	ChallengeDeadline string  `json:"challenge_deadline"`
	VoteDeadline      *string `json:"vote_deadline"`
	CreatedAt         string  `json:"created_at"`
	ResolvedAt        *string `json:"resolved_at"`
}

// proposalFields are the fields of a proposal object (docs/API.md, "The
// proposal object").
var proposalFields = map[string]fieldKind{
	"id": kindUUID, "market_id": kindUUID, "outcome": kindString, "status": kindString,
	"proposer_id": kindUUID, "challenger_id": kindStringOrNull, "bond": kindNumber, "votes": kindObject, "stakes": kindObject,
	"challenge_deadline": kindTime, "vote_deadline": kindTimeOrNull, "created_at": kindTime,
	"resolved_at": kindTimeOrNull,
}

// oracleCall posts to an oracle endpoint and decodes the proposal answered.
func (ts *testServer) oracleCall(a auth, path string, body map[string]any) proposalOut {
	ts.t.Helper()
	r := ts.do("POST", path, a, jsonBody(body))
	ts.expect(r, http.StatusOK, "")
	checkFields(ts.t, path, r.json(ts.t), proposalFields)
	var p proposalOut
	ts.decode(r, http.StatusOK, &p)
	return p
}

func (ts *testServer) oracleStatus(a auth, query string) proposalOut {
	ts.t.Helper()
	var p proposalOut
	ts.decode(ts.do("GET", "/api/oracle/status?"+query, a, ""), http.StatusOK, &p)
	return p
}

// TestOracleFlow proposes, challenges and votes over HTTP, then lets the
// vote's deadline pass: one vote of the least stake is far from the
// default quorum (10,000 KP from 5 voters), so the proposal escalates to
// the admin, the stake returns and the bonds stay held until the admin
// settles (docs/API.md, "The oracle").
func TestOracleFlow(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	alice := auth{session: ts.register("alice")}
	bob := auth{key: ts.newKey(ts.register("bob"), "trade", "read")}
	carol := auth{session: ts.register("carol")}
	mkt := ts.createMarket(adm, map[string]any{"closes_at": iso(clk.Now().Add(time.Hour))}).ID.String()
	ts.trade(carol, mkt, "no", "buy", "4")
	clk.Advance(2 * time.Hour)
	aliceBefore, bobBefore := ts.points(alice, "").Balance, ts.points(bob, "").Balance
	bond := core.DefaultOracleBond

	p := ts.oracleCall(alice, "/api/oracle/propose", map[string]any{"market_id": mkt, "outcome": "yes"})
	if p.Status != "proposed" || p.MarketID != mkt || p.Outcome != "yes" || p.Bond != bond || p.ChallengerID != nil ||
		p.VoteDeadline != nil || p.ResolvedAt != nil || p.CreatedAt != iso(clk.Now()) ||
		p.ChallengeDeadline != iso(clk.Now().Add(core.DefaultChallengeWindow)) {
		t.Fatalf("proposed %+v", p)
	}
	if got := ts.points(alice, "?limit=1"); got.Balance != aliceBefore-bond || got.Ledger[0].TxType != "oracle_bond" ||
		got.Ledger[0].RefID.String() != p.ID {
		t.Fatalf("proposer after proposing: %+v", got)
	}
	if got := ts.oracleStatus(bob, "market_id="+mkt); !reflect.DeepEqual(got, p) {
		t.Fatalf("status by market %+v, want %+v", got, p)
	}

	clk.Advance(time.Hour)
	c := ts.oracleCall(bob, "/api/oracle/challenge", map[string]any{"proposal_id": p.ID})
	if c.Status != "challenged" || c.ChallengerID == nil || c.VoteDeadline == nil ||
		*c.VoteDeadline != iso(clk.Now().Add(core.DefaultVoteWindow)) {
		t.Fatalf("challenged %+v", c)
	}
	carolBefore := ts.points(carol, "").Balance
	v := ts.oracleCall(carol, "/api/oracle/vote", map[string]any{"proposal_id": p.ID, "outcome": "no"})
	if v.Votes.Yes != 0 || v.Votes.No != 1 || v.Stakes.No != core.DefaultVoteStake || v.Stakes.Yes != 0 || v.Status != "challenged" {
		t.Fatalf("after the vote %+v", v)
	}
	if got := ts.points(carol, "?limit=1"); got.Balance != carolBefore-core.DefaultVoteStake || got.Ledger[0].TxType != "oracle_stake" {
		t.Fatalf("voter after voting: %+v, want the least stake locked", got)
	}
	if got := ts.oracleStatus(alice, "proposal_id="+p.ID); !reflect.DeepEqual(got, v) {
		t.Fatalf("status by proposal %+v, want %+v", got, v)
	}

	clk.Advance(core.DefaultVoteWindow)
	if n, err := ts.eng.OracleDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("OracleDue = %d, %v", n, err)
	}
	end := ts.oracleStatus(alice, "market_id="+mkt)
	if end.Status != "escalated" || end.ResolvedAt != nil {
		t.Fatalf("after the deadline %+v, want escalated", end)
	}
	if m := ts.market(mkt); m.Status != "closed" {
		t.Fatalf("market %+v, want still closed", m)
	}
	if got := ts.points(carol, "?limit=1"); got.Balance != carolBefore || got.Ledger[0].TxType != "oracle_stake_return" {
		t.Errorf("voter after the escalation %+v, want the stake back", got)
	}
	// The admin is the final authority: the settlement cancels the
	// proposal and returns both bonds.
	ts.expect(ts.do("POST", "/api/admin/settle", auth{session: adm}, settleBody(mkt, "no")), http.StatusOK, "")
	if got := ts.oracleStatus(alice, "market_id="+mkt); got.Status != "cancelled" {
		t.Fatalf("after the admin's settlement %+v, want cancelled", got)
	}
	if got := ts.points(alice, "").Balance; got != aliceBefore {
		t.Errorf("proposer balance %v, want %v", got, aliceBefore)
	}
	if got := ts.points(bob, "").Balance; got != bobBefore {
		t.Errorf("challenger balance %v, want %v", got, bobBefore)
	}
}

// TestOracleAdminSettleCancels settles a market with an open proposal: it
// is cancelled and the bond returned.
func TestOracleAdminSettleCancels(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	alice := auth{session: ts.register("alice")}
	mkt := ts.createMarket(adm, map[string]any{"closes_at": iso(clk.Now().Add(time.Hour))}).ID.String()
	clk.Advance(2 * time.Hour)
	before := ts.points(alice, "").Balance
	p := ts.oracleCall(alice, "/api/oracle/propose", map[string]any{"market_id": mkt, "outcome": "no"})
	ts.expect(ts.do("POST", "/api/admin/settle", auth{session: adm}, settleBody(mkt, "yes")), http.StatusOK, "")
	if got := ts.oracleStatus(alice, "proposal_id="+p.ID); got.Status != "cancelled" || got.ResolvedAt == nil {
		t.Fatalf("after settlement %+v, want cancelled", got)
	}
	pts := ts.points(alice, "?limit=1")
	if pts.Balance != before || pts.Ledger[0].TxType != "oracle_bond_return" || pts.Ledger[0].RefID.String() != p.ID {
		t.Fatalf("proposer after settlement %+v, want the bond back", pts)
	}
}

// TestOracleErrors walks every refusal of the oracle's endpoints, in an
// order that moves one market through its states; each changes nothing.
func TestOracleErrors(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	alice := auth{session: ts.register("alice")}
	bob := auth{session: ts.register("bob")}
	carol := auth{session: ts.register("carol")}
	poor := auth{session: ts.register("poor")}
	mkt := ts.createMarket(adm, map[string]any{"closes_at": iso(clk.Now().Add(time.Hour))}).ID.String()
	open := ts.createMarket(adm, nil).ID.String()
	// poor spends its KP below one bond.
	for ts.points(poor, "").Balance >= core.DefaultOracleBond {
		ts.trade(poor, open, "yes", "buy", "50")
	}
	unknown := uuid.NewString()
	var pid string
	type body = map[string]any
	propose, challenge, vote := "/api/oracle/propose", "/api/oracle/challenge", "/api/oracle/vote"
	steps := []struct {
		name   string
		a      auth
		method string
		path   string
		body   func() body
		status int
		msg    string // exact message, or
		field  string // the field the message names
		after  func()
	}{
		{"propose on an open market", alice, "POST", propose, func() body { return body{"market_id": mkt, "outcome": "yes"} },
			400, "Market is not closed", "", func() { clk.Advance(2 * time.Hour) }},
		{"propose without market_id", alice, "POST", propose, func() body { return body{"outcome": "yes"} }, 400, "", "market_id", nil},
		{"propose with a bad market_id", alice, "POST", propose, func() body { return body{"market_id": "x", "outcome": "yes"} }, 400, "", "market_id", nil},
		{"propose a bad outcome", alice, "POST", propose, func() body { return body{"market_id": mkt, "outcome": "maybe"} }, 400, "", "outcome", nil},
		{"propose an unknown field", alice, "POST", propose, func() body { return body{"market_id": mkt, "outcome": "yes", "x": 1} }, 400, "", "x", nil},
		{"propose on an unknown market", alice, "POST", propose, func() body { return body{"market_id": unknown, "outcome": "yes"} }, 404, "Market not found", "", nil},
		{"propose without the bond", poor, "POST", propose, func() body { return body{"market_id": mkt, "outcome": "yes"} }, 400, "Insufficient balance", "", nil},
		{"status with neither", alice, "GET", "/api/oracle/status", nil, 400, "", "market_id", nil},
		{"status with both", alice, "GET", "/api/oracle/status?market_id=" + mkt + "&proposal_id=" + unknown, nil, 400, "", "proposal_id", nil},
		{"status with a bad id", alice, "GET", "/api/oracle/status?proposal_id=nope", nil, 400, "", "proposal_id", nil},
		{"status of a market without proposals", alice, "GET", "/api/oracle/status?market_id=" + mkt, nil, 404, "Proposal not found", "", nil},
		{"status of an unknown proposal", alice, "GET", "/api/oracle/status?proposal_id=" + unknown, nil, 404, "Proposal not found", "", nil},
		{"status of an unknown market", alice, "GET", "/api/oracle/status?market_id=" + unknown, nil, 404, "Market not found", "", nil},
		{"proposed", alice, "POST", propose, func() body { return body{"market_id": mkt, "outcome": "yes"} }, 200, "", "", nil},
		{"propose again", bob, "POST", propose, func() body { return body{"market_id": mkt, "outcome": "no"} }, 400, "Proposal already open", "", nil},
		{"challenge without proposal_id", bob, "POST", challenge, func() body { return body{} }, 400, "", "proposal_id", nil},
		{"challenge an unknown proposal", bob, "POST", challenge, func() body { return body{"proposal_id": unknown} }, 404, "Proposal not found", "", nil},
		{"challenge one's own", alice, "POST", challenge, func() body { return body{"proposal_id": pid} }, 400, "Cannot challenge your own proposal", "", nil},
		{"challenge without the bond", poor, "POST", challenge, func() body { return body{"proposal_id": pid} }, 400, "Insufficient balance", "", nil},
		{"vote before a challenge", carol, "POST", vote, func() body { return body{"proposal_id": pid, "outcome": "yes"} }, 400, "Proposal is not open for voting", "", nil},
		{"challenged", bob, "POST", challenge, func() body { return body{"proposal_id": pid} }, 200, "", "", nil},
		{"challenge again", carol, "POST", challenge, func() body { return body{"proposal_id": pid} }, 400, "Proposal is not open for challenge", "", nil},
		{"proposer votes", alice, "POST", vote, func() body { return body{"proposal_id": pid, "outcome": "yes"} }, 400, "Proposer and challenger cannot vote", "", nil},
		{"challenger votes", bob, "POST", vote, func() body { return body{"proposal_id": pid, "outcome": "no"} }, 400, "Proposer and challenger cannot vote", "", nil},
		{"vote a bad outcome", carol, "POST", vote, func() body { return body{"proposal_id": pid, "outcome": "both"} }, 400, "", "outcome", nil},
		{"vote on an unknown proposal", carol, "POST", vote, func() body { return body{"proposal_id": unknown, "outcome": "no"} }, 404, "Proposal not found", "", nil},
		{"voted", carol, "POST", vote, func() body { return body{"proposal_id": pid, "outcome": "no"} }, 200, "", "", nil},
		{"vote again", carol, "POST", vote, func() body { return body{"proposal_id": pid, "outcome": "yes"} }, 400, "Already voted", "",
			func() { clk.Advance(core.DefaultVoteWindow) }},
		{"vote after the deadline", poor, "POST", vote, func() body { return body{"proposal_id": pid, "outcome": "yes"} }, 400, "Proposal is not open for voting", "",
			func() {
				ts.expect(ts.do("POST", "/api/admin/settle", auth{session: adm}, settleBody(mkt, "yes")), http.StatusOK, "")
			}},
		{"propose on a resolved market", alice, "POST", propose, func() body { return body{"market_id": mkt, "outcome": "yes"} }, 400, "Market already resolved", "", nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			ts := ts.sub(t)
			payload := ""
			if st.body != nil {
				payload = jsonBody(st.body())
			}
			before := ts.eng.State().Canonical()
			r := ts.do(st.method, st.path, st.a, payload)
			if st.status == http.StatusOK {
				ts.expect(r, http.StatusOK, "")
				if pid == "" {
					var p proposalOut
					ts.decode(r, http.StatusOK, &p)
					pid = p.ID
				}
			} else {
				ts.expectError(r, st.status, st.msg, st.field)
				if after := ts.eng.State().Canonical(); len(after.Markets) != len(before.Markets) ||
					!sameProposals(after, before) {
					t.Errorf("a refused request changed the proposals")
				}
			}
			if st.after != nil {
				st.after()
			}
		})
	}
}

// sameProposals reports whether two state images hold the same proposals
// and votes.
func sameProposals(a, b *core.Record) bool {
	for i := range a.Markets {
		if len(a.Markets[i].Proposals) != len(b.Markets[i].Proposals) || len(a.Markets[i].Votes) != len(b.Markets[i].Votes) {
			return false
		}
		for j := range a.Markets[i].Proposals {
			if a.Markets[i].Proposals[j] != b.Markets[i].Proposals[j] {
				return false
			}
		}
	}
	return true
}
