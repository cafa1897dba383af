package transport

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/transport/wire"
)

// settleOut is a settlement answer.
type settleOut struct {
	MarketID      string       `json:"market_id"`
	Outcome       string       `json:"outcome"`
	PositionsPaid int          `json:"positions_paid"`
	TotalPaid     money.Amount `json:"total_paid"`
}

func settleBody(market, outcome string) string {
	return jsonBody(map[string]any{"market_id": market, "outcome": outcome})
}

// TestSettle settles an active market with holders on both sides and a
// split, a closed market and a market nobody traded, and checks the
// answers, the payouts in balances and ledgers, the closed positions and
// the market's resolution.
func TestSettle(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	adminKey := ts.newKey(adm, "admin")
	alice := auth{session: ts.register("alice")}
	bob := auth{session: ts.register("bob")}
	carol := auth{session: ts.register("carol")}
	active := ts.createMarket(adm, nil).ID.String()
	closedLogged := ts.createMarket(adm, map[string]any{"closes_at": iso(clk.Now().Add(time.Hour))}).ID.String()
	closed := ts.createMarket(adm, map[string]any{"closes_at": iso(clk.Now().Add(3 * time.Hour))}).ID.String()
	empty := ts.createMarket(adm, nil).ID.String()
	ts.trade(alice, active, "yes", "buy", "10")
	ts.trade(bob, active, "no", "buy", "5")
	ts.splitMerge(carol, active, "split", "3")
	ts.trade(alice, closed, "no", "buy", "2.5")
	ts.trade(bob, closed, "yes", "buy", "1")
	ts.trade(carol, closedLogged, "yes", "buy", "1")
	// closedLogged's close is logged, as the engine's ticker would;
	// closed is only past its closing time.
	clk.Advance(2 * time.Hour)
	if n, err := ts.eng.CloseDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("CloseDue = %d, %v; want 1 market closed", n, err)
	}
	clk.Advance(2 * time.Hour)

	tests := []struct {
		name     string
		a        auth
		market   string
		outcome  string
		paid     int
		total    money.Amount
		payouts  map[*auth]money.Amount // winners and what each gets
		unpaid   []*auth
		statusIn string // the market's status before
	}{
		{"active market, admin session", auth{session: adm}, active, "yes", 2, money.Units(13),
			map[*auth]money.Amount{&alice: money.Units(10), &carol: money.Units(3)}, []*auth{&bob}, "active"},
		{"closed market, admin key", auth{key: adminKey}, closed, "no", 1, money.Amount(2_500_000),
			map[*auth]money.Amount{&alice: money.Amount(2_500_000)}, []*auth{&bob}, "closed"},
		{"closed market, close logged", auth{session: adm}, closedLogged, "yes", 1, money.Units(1),
			map[*auth]money.Amount{&carol: money.Units(1)}, nil, "closed"},
		{"market without holders", auth{session: adm}, empty, "no", 0, 0, nil, nil, "active"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := ts.sub(t)
			if m := ts.market(tt.market); m.Status != tt.statusIn {
				t.Fatalf("status before %q, want %q", m.Status, tt.statusIn)
			}
			before := map[*auth]wire.Points{}
			for who := range tt.payouts {
				before[who] = ts.points(*who, "")
			}
			for _, who := range tt.unpaid {
				before[who] = ts.points(*who, "")
			}
			r := ts.do("POST", "/api/admin/settle", tt.a, settleBody(tt.market, tt.outcome))
			ts.expect(r, http.StatusOK, "")
			checkFields(t, "settle", r.json(t), map[string]fieldKind{"market_id": kindUUID, "outcome": kindString,
				"positions_paid": kindInteger, "total_paid": kindNumber})
			var got settleOut
			ts.decode(r, http.StatusOK, &got)
			if want := (settleOut{tt.market, tt.outcome, tt.paid, tt.total}); got != want {
				t.Errorf("settle = %+v, want %+v", got, want)
			}
			for who, amount := range tt.payouts {
				p := ts.points(*who, "?limit=1")
				e := p.Ledger[0]
				want := before[who].Balance + amount
				if p.Balance != want || e.TxType != "settlement_payout" || e.Amount != amount || e.BalanceAfter != want ||
					p.Count != before[who].Count+1 {
					t.Errorf("winner: balance %v, newest entry %+v, %d entries; want %v, settlement_payout of %v, %d entries",
						p.Balance, e, p.Count, want, amount, before[who].Count+1)
				}
			}
			for _, who := range tt.unpaid {
				if p := ts.points(*who, ""); p.Balance != before[who].Balance || p.Count != before[who].Count {
					t.Errorf("loser: balance %v, %d entries; want %v, %d", p.Balance, p.Count, before[who].Balance, before[who].Count)
				}
			}
			for _, who := range []*auth{&alice, &bob, &carol} {
				for _, side := range sideNames {
					if pos := heldPosition(ts.profile(*who), tt.market, side); pos != (wire.Position{}) {
						t.Errorf("position %+v still open after settlement", pos)
					}
				}
			}
			m := ts.market(tt.market)
			if m.Status != "resolved" || m.Outcome == nil || *m.Outcome != tt.outcome || m.ResolvedAt == nil || *m.ResolvedAt != wire.Timestamp(clk.Now().UnixNano()) {
				t.Errorf("market after settlement: status %q, outcome %v, resolved_at %v", m.Status, m.Outcome, m.ResolvedAt)
			}
		})
	}
}

// TestSettleRefused covers every error of the settle endpoint, the second
// settlement of a market included; none changes anything.
func TestSettleRefused(t *testing.T) {
	ts, _ := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	alice := auth{session: ts.register("alice")}
	readKey := ts.newKey(adm, "read", "trade")
	open := ts.createMarket(adm, nil).ID.String()
	done := ts.createMarket(adm, nil).ID.String()
	ts.trade(alice, open, "yes", "buy", "4")
	ts.trade(alice, done, "yes", "buy", "4")
	ts.expect(ts.do("POST", "/api/admin/settle", auth{session: adm}, settleBody(done, "yes")), http.StatusOK, "")

	adminSession := auth{session: adm}
	tests := []struct {
		name   string
		a      auth
		market string
		body   string
		status int
		msg    string
		field  string
	}{
		{"already resolved", adminSession, done, settleBody(done, "no"), 400, "Market already resolved", ""},
		{"already resolved, same outcome", adminSession, done, settleBody(done, "yes"), 400, "Market already resolved", ""},
		{"unknown market", adminSession, open, settleBody(uuid.NewString(), "yes"), 404, "Market not found", ""},
		{"outcome before unknown market", adminSession, open, settleBody(uuid.NewString(), "maybe"), 400, "", "outcome"},
		{"market_id missing", adminSession, open, `{"outcome":"yes"}`, 400, "", "market_id"},
		{"market_id malformed", adminSession, open, settleBody("m-1", "yes"), 400, "", "market_id"},
		{"outcome missing", adminSession, open, fmt.Sprintf(`{"market_id":%q}`, open), 400, "", "outcome"},
		{"outcome invalid", adminSession, open, settleBody(open, "maybe"), 400, "", "outcome"},
		{"outcome in capitals", adminSession, open, settleBody(open, "YES"), 400, "", "outcome"},
		{"outcome not a string", adminSession, open, fmt.Sprintf(`{"market_id":%q,"outcome":true}`, open), 400, "", "outcome"},
		{"unknown field", adminSession, open, fmt.Sprintf(`{"market_id":%q,"outcome":"yes","payout":2}`, open), 400, "", "payout"},
		{"no credentials", auth{}, open, settleBody(open, "yes"), 401, "Authentication required", ""},
		{"speculator session", alice, open, settleBody(open, "yes"), 403, "Admin role required", ""},
		{"admin key without admin scope", auth{key: readKey}, open, settleBody(open, "yes"), 403, "Insufficient scope", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.observe(alice, tt.market)
			ts.expectError(ts.do("POST", "/api/admin/settle", tt.a, tt.body), tt.status, tt.msg, tt.field)
			ts.unchanged(alice, tt.market, before)
		})
	}
	// The resolved market takes no more trades.
	before := ts.observe(alice, done)
	ts.expect(ts.do("POST", "/api/markets/trade", alice, fmt.Sprintf(`{"market_id":%q,"side":"no","shares":1}`, done)),
		http.StatusBadRequest, "Market is not active")
	ts.unchanged(alice, done, before)
}

// statsOut is the part of GET /api/admin/stats the tests read.
type statsOut struct {
	Accounts int `json:"accounts"`
	Markets  struct {
		Active   int `json:"active"`
		Closed   int `json:"closed"`
		Resolved int `json:"resolved"`
		Total    int `json:"total"`
	} `json:"markets"`
	Trades       struct{ KP, USDC uint64 }       `json:"trades"`
	Volume       struct{ KP, USDC money.Amount } `json:"volume"`
	OpenInterest struct{ KP, USDC money.Amount } `json:"open_interest"`
	ActiveKeys   int                             `json:"active_keys"`
}

// TestAdminStats builds a known state (accounts, markets in each status,
// trades, splits, keys, one revoked) and checks every total of the admin
// statistics, and who may read them.
func TestAdminStats(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	alice := auth{session: ts.register("alice")}
	bob := auth{session: ts.register("bob")}
	adminKey := ts.newKey(adm, "admin")
	aliceKey := ts.newKey(alice.session, "read")
	revoked := ts.do("POST", "/api/keys", alice, `{"name":"old","scopes":["read"]}`)
	ts.expect(revoked, http.StatusCreated, "")
	ts.expect(ts.do("DELETE", "/api/keys/"+revoked.json(t)["id"].(string), alice, ""), http.StatusOK, "")

	a := ts.createMarket(adm, nil).ID.String()
	b := ts.createMarket(adm, map[string]any{"closes_at": iso(clk.Now().Add(time.Hour))}).ID.String()
	c := ts.createMarket(adm, nil).ID.String()
	ts.createMarket(adm, nil)
	var volume money.Amount
	buy := func(who auth, market, side, shares string) {
		volume += ts.trade(who, market, side, "buy", shares).Cost
	}
	buy(alice, a, "yes", "10")
	buy(bob, a, "no", "4")
	ts.splitMerge(bob, a, "split", "3")
	volume += ts.trade(alice, a, "yes", "sell", "1").Cost // 9 yes + 3 from the split
	buy(alice, b, "no", "2")
	buy(bob, c, "yes", "7")
	ts.expect(ts.do("POST", "/api/admin/settle", auth{session: adm}, settleBody(c, "yes")), http.StatusOK, "")
	clk.Advance(2 * time.Hour) // b is closed

	r := ts.do("GET", "/api/admin/stats", auth{key: adminKey}, "")
	ts.expect(r, http.StatusOK, "")
	raw := r.json(t)
	checkFields(t, "stats", raw, map[string]fieldKind{"accounts": kindInteger, "markets": kindObject, "trades": kindObject,
		"volume": kindObject, "open_interest": kindObject, "active_keys": kindInteger})
	var got statsOut
	ts.decode(r, http.StatusOK, &got)
	var want statsOut
	want.Accounts = 3 // admin, alice, bob; not the house
	want.Markets.Active, want.Markets.Closed, want.Markets.Resolved, want.Markets.Total = 2, 1, 1, 4
	want.Trades.KP = 5
	want.Volume.KP = volume
	// Unresolved markets only, each its larger side: a holds 12 yes
	// against 7 no, b 2 no.
	want.OpenInterest.KP = money.Units(12) + money.Units(2)
	want.ActiveKeys = 2
	if got != want {
		t.Errorf("stats %s\n got  %+v\n want %+v", r.body, got, want)
	}
	// Nobody else reads them.
	ts.expect(ts.do("GET", "/api/admin/stats", alice, ""), http.StatusForbidden, "Admin role required")
	ts.expect(ts.do("GET", "/api/admin/stats", auth{key: aliceKey}, ""), http.StatusForbidden, "Insufficient scope")
	ts.expect(ts.do("GET", "/api/admin/stats", auth{}, ""), http.StatusUnauthorized, "Authentication required")
}
