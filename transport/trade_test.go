package transport

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/core/pricing"
	"marketd/transport/wire"
)

// tradeModel is what a market and one trader should look like after a
// run of trades, computed with the pricing package and the cost-basis rule
// of docs/API.md, "GET /api/agents/me", independently of the server.
type tradeModel struct {
	alpha   float64
	q       [2]money.Amount
	balance money.Amount
	shares  [2]money.Amount
	cost    [2]money.Amount
	volume  money.Amount
}

// apply prices a trade at the model's state and applies it; it returns
// the quote the server must match.
func (m *tradeModel) apply(t *testing.T, side int, sell bool, shares money.Amount) pricing.Quote {
	t.Helper()
	if sell {
		q, err := pricing.QuoteSell(m.alpha, m.q, side, shares)
		if err != nil {
			t.Fatal(err)
		}
		out, err := m.cost[side].MulDivFloor(shares, m.shares[side])
		if err != nil {
			t.Fatal(err)
		}
		m.cost[side] -= out
		m.shares[side] -= shares
		m.balance += q.Amount
		m.q, m.volume = q.QAfter, m.volume+q.Amount
		return q
	}
	q, err := pricing.QuoteBuy(m.alpha, m.q, side, shares)
	if err != nil {
		t.Fatal(err)
	}
	m.cost[side] += q.Amount
	m.shares[side] += shares
	m.balance -= q.Amount
	m.q, m.volume = q.QAfter, m.volume+q.Amount
	return q
}

var sideNames = [2]string{"yes", "no"}

// TestTrade runs buys and sells in both request shapes, with and without
// slippage limits, and checks every answer against the model, then the
// positions in the profile and the portfolio, the market, and the ledger.
func TestTrade(t *testing.T) {
	ts, _ := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	sess := ts.register("trader")
	key := ts.newKey(sess, "trade")
	mkt := ts.createMarket(adm, nil)
	model := tradeModel{alpha: core.DefaultAlpha, q: [2]money.Amount{money.Units(1000), money.Units(1000)},
		balance: money.Units(1000)}
	// exact returns the cost of the next trade, for a limit that is just met.
	exact := func(side int, sell bool, shares money.Amount) string {
		m := model
		return m.apply(t, side, sell, shares).Amount.String()
	}
	id := mkt.ID.String()
	steps := []struct {
		name   string
		a      auth
		body   func() string // built when the step runs, from the model then
		side   int
		sell   bool
		shares money.Amount
	}{
		{"reference buy, type omitted", auth{session: sess}, func() string {
			return fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":10}`, id)
		}, 0, false, money.Units(10)},
		{"reference buy at max_cost exactly, with a key", auth{key: key}, func() string {
			return fmt.Sprintf(`{"market_id":%q,"side":"yes","type":"buy","shares":5,"max_cost":%s,"reasoning":%q}`,
				id, exact(0, false, money.Units(5)), strings.Repeat("é", core.MaxReasoningRunes))
		}, 0, false, money.Units(5)},
		{"workflow buy", auth{session: sess}, func() string {
			return fmt.Sprintf(`{"marketId":%q,"outcome":"no","side":"buy","amount":3.5,"reasoning":"cheap"}`, id)
		}, 1, false, money.Amount(3_500_000)},
		{"partial sell at min_proceeds exactly", auth{session: sess}, func() string {
			return fmt.Sprintf(`{"market_id":%q,"side":"yes","type":"sell","shares":6,"min_proceeds":%s}`,
				id, exact(0, true, money.Units(6)))
		}, 0, true, money.Units(6)},
		{"workflow sell, fractional", auth{session: sess}, func() string {
			return fmt.Sprintf(`{"marketId":%q,"outcome":"no","side":"sell","amount":1.000001}`, id)
		}, 1, true, money.Amount(1_000_001)},
	}
	var tradeIDs []string
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			ts := ts.sub(t)
			r := ts.do("POST", "/api/markets/trade", st.a, st.body())
			ts.expect(r, http.StatusOK, "")
			checkFields(t, "trade", r.json(t), map[string]fieldKind{
				"trade_id": kindUUID, "cost": kindNumber, "price_yes_after": kindNumber, "price_no_after": kindNumber,
				"market_id": kindUUID, "side": kindString, "type": kindString, "shares": kindNumber,
				"balance_after": kindNumber, "vig": kindNumber,
			})
			var got wire.Trade
			ts.decode(r, http.StatusOK, &got)
			q := model.apply(t, st.side, st.sell, st.shares)
			want := wire.Trade{TradeFields: wire.TradeFields{TradeID: got.TradeID, MarketID: uuid.MustParse(id),
				Side: sideNames[st.side], Type: tradeType(st.sell), Currency: "kp", Shares: st.shares, Cost: q.Amount},
				Vig: q.Vig, BalanceAfter: model.balance, PriceYesAfter: q.PricesAfter[0], PriceNoAfter: q.PricesAfter[1],
				CreatedAt: got.CreatedAt, MarketSeq: got.MarketSeq}
			if got != want {
				t.Errorf("trade %s\n got  %+v\n want %+v", r.body, got, want)
			}
			if q.Amount <= 0 || q.Vig <= 0 || q.Vig >= q.Amount {
				t.Errorf("cost %v, vig %v: want 0 < vig < cost", q.Amount, q.Vig)
			}
			tradeIDs = append(tradeIDs, got.TradeID.String())
		})
	}
	if t.Failed() {
		return
	}

	t.Run("positions", func(t *testing.T) {
		ts := ts.sub(t)
		p := ts.profile(auth{session: sess})
		var port struct {
			Balance   money.Amount    `json:"balance"`
			Positions []wire.Position `json:"positions"`
		}
		ts.decode(ts.do("GET", "/api/portfolio", auth{session: sess}, ""), http.StatusOK, &port)
		for side, name := range sideNames {
			want := wire.Position{MarketID: uuid.MustParse(id), Side: name, Currency: "kp", Shares: model.shares[side], Cost: model.cost[side],
				AvgPrice: model.cost[side].Float() / model.shares[side].Float()}
			if got := heldPosition(p, id, name); got != want {
				t.Errorf("agents/me %s position %+v, want %+v", name, got, want)
			}
			if got := heldPosition(wire.Profile{Positions: port.Positions}, id, name); got != want {
				t.Errorf("portfolio %s position %+v, want %+v", name, got, want)
			}
		}
		if p.Agent.Balance != model.balance || port.Balance != model.balance {
			t.Errorf("balance %v (agents/me), %v (portfolio), want %v", p.Agent.Balance, port.Balance, model.balance)
		}
		if p.Stats.OpenPositions != 2 || p.Stats.TotalInvested != model.cost[0]+model.cost[1] {
			t.Errorf("stats %+v, want 2 positions and %v invested", p.Stats, model.cost[0]+model.cost[1])
		}
		m := ts.market(id)
		if m.Liquidity.QYes != model.q[0] || m.Liquidity.QNo != model.q[1] || m.Volume != model.volume {
			t.Errorf("market q %v/%v, volume %v; want %v, %v", m.Liquidity.QYes, m.Liquidity.QNo, m.Volume, model.q, model.volume)
		}
		yes, no := pricing.Prices(model.alpha, model.q)
		if m.Prices != (wire.SidePair{Yes: yes, No: no}) {
			t.Errorf("market prices %+v, want %v %v", m.Prices, yes, no)
		}
	})

	t.Run("recent trades keep the reasoning", func(t *testing.T) {
		ts := ts.sub(t)
		var me struct {
			RecentTrades []struct {
				TradeID   string `json:"trade_id"`
				Type      string `json:"type"`
				Reasoning string `json:"reasoning"`
			} `json:"recent_trades"`
		}
		ts.decode(ts.do("GET", "/api/agents/me", auth{session: sess}, ""), http.StatusOK, &me)
		if len(me.RecentTrades) != len(steps) {
			t.Fatalf("%d recent trades, want %d", len(me.RecentTrades), len(steps))
		}
		// Newest first: step i is item len(steps)-1-i.
		for i, want := range map[int]string{1: strings.Repeat("é", core.MaxReasoningRunes), 2: "cheap", 3: ""} {
			got := me.RecentTrades[len(steps)-1-i]
			if got.TradeID != tradeIDs[i] || got.Reasoning != want {
				t.Errorf("recent trade of step %d: %+v, want trade %s with reasoning %.20q", i, got, tradeIDs[i], want)
			}
		}
	})

	t.Run("ledger", func(t *testing.T) {
		ts := ts.sub(t)
		r := ts.do("GET", "/api/points", auth{session: sess}, "")
		ts.expect(r, http.StatusOK, "")
		raw := r.json(t)
		checkFields(t, "points", raw, map[string]fieldKind{"balance": kindNumber, "ledger": kindArray})
		for _, it := range raw["ledger"].([]any) {
			checkFields(t, "ledger item", it.(map[string]any), map[string]fieldKind{"id": kindUUID, "amount": kindNumber,
				"tx_type": kindString, "balance_after": kindNumber, "created_at": kindTime, "ref_id": kindUUID})
		}
		var p wire.Points
		ts.decode(r, http.StatusOK, &p)
		if p.Balance != model.balance || p.Count != len(steps)+1 || len(p.Ledger) != len(steps)+1 || p.Limit != defaultLedgerLimit {
			t.Fatalf("points: balance %v, count %d, %d items, limit %d; want %v, %d, %d, %d",
				p.Balance, p.Count, len(p.Ledger), p.Limit, model.balance, len(steps)+1, len(steps)+1, defaultLedgerLimit)
		}
		// Newest first: the trades in reverse, then the signup bonus.
		oldest := p.Ledger[len(p.Ledger)-1]
		if oldest.TxType != "signup_bonus" || oldest.Amount != money.Units(1000) || oldest.BalanceAfter != money.Units(1000) {
			t.Errorf("oldest entry %+v, want the signup bonus of 1000", oldest)
		}
		for i, e := range p.Ledger[:len(steps)] {
			st := steps[len(steps)-1-i]
			// A buy is recorded with a negative amount (docs/API.md, "GET
			// /api/points"), a
			// sell with a positive one.
			wantType := "trade_buy"
			if st.sell {
				wantType = "trade_sell"
			}
			prev := p.Ledger[i+1]
			if e.TxType != wantType || e.RefID.String() != tradeIDs[len(steps)-1-i] ||
				e.BalanceAfter != prev.BalanceAfter+e.Amount || (e.Amount > 0) != st.sell || e.Amount == 0 {
				t.Errorf("entry %d %+v: want %s with ref_id %s, balance_after %v + amount",
					i, e, wantType, tradeIDs[len(steps)-1-i], prev.BalanceAfter)
			}
		}
		if p.Ledger[0].BalanceAfter != model.balance {
			t.Errorf("newest balance_after %v, want the balance %v", p.Ledger[0].BalanceAfter, model.balance)
		}
		page := ts.points(auth{session: sess}, "?limit=2&offset=1")
		if page.Count != len(steps)+1 || page.Limit != 2 || page.Offset != 1 || len(page.Ledger) != 2 ||
			page.Ledger[0] != p.Ledger[1] || page.Ledger[1] != p.Ledger[2] {
			t.Errorf("limit=2&offset=1: %+v, want items 1 and 2 of %+v", page, p.Ledger)
		}
		if past := ts.points(auth{session: sess}, "?offset=100&limit=1000"); len(past.Ledger) != 0 || past.Count != len(steps)+1 {
			t.Errorf("offset past the end: %+v", past)
		}
	})
}

// TestTradeRefused sends trades that fail each check of docs/API.md, "POST
// /api/markets/trade", alone and together with later checks (the earliest
// answers), and checks that none changed the trader's balance, positions or
// ledger, or the market.
func TestTradeRefused(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	sess := ts.register("trader")
	a := auth{session: sess}
	open := ts.createMarket(adm, nil).ID.String()
	closed := ts.createMarket(adm, map[string]any{"closes_at": iso(clk.Now().Add(time.Hour))}).ID.String()
	resolved := ts.createMarket(adm, nil).ID.String()
	ts.trade(a, open, "yes", "buy", "10")
	ts.trade(a, closed, "yes", "buy", "1")
	ts.expect(ts.do("POST", "/api/admin/settle", auth{session: adm}, jsonBody(map[string]any{"market_id": resolved, "outcome": "no"})),
		http.StatusOK, "")
	clk.Advance(2 * time.Hour)

	body := func(market, side, typ, shares, extra string) string {
		return fmt.Sprintf(`{"market_id":%q,"side":%q,"type":%q,"shares":%s%s}`, market, side, typ, shares, extra)
	}
	unknown := uuid.NewString()
	tests := []struct {
		name   string
		market string // whose state must not change
		body   string
		status int
		msg    string
		field  string
	}{
		// Fields, in the reference shape.
		{"empty object", open, `{}`, 400, "", "market_id"},
		{"market_id missing", open, `{"side":"yes","shares":1}`, 400, "", "market_id"},
		{"market_id malformed", open, body("nope", "yes", "buy", "1", ""), 400, "", "market_id"},
		{"market_id a number", open, `{"market_id":5,"side":"yes","shares":1}`, 400, "", "market_id"},
		{"side missing", open, fmt.Sprintf(`{"market_id":%q,"shares":1}`, open), 400, "", "side"},
		{"side not yes or no", open, body(open, "maybe", "buy", "1", ""), 400, "", "side"},
		{"side in capitals", open, body(open, "YES", "buy", "1", ""), 400, "", "side"},
		{"shares missing", open, fmt.Sprintf(`{"market_id":%q,"side":"yes"}`, open), 400, "", "shares"},
		{"shares zero", open, body(open, "yes", "buy", "0", ""), 400, "", "shares"},
		{"shares negative", open, body(open, "yes", "buy", "-1", ""), 400, "", "shares"},
		{"shares over 1e9", open, body(open, "yes", "buy", "1000000000.000001", ""), 400, "", "shares"},
		{"shares 7 decimals", open, body(open, "yes", "buy", "1.0000001", ""), 400, "", "shares"},
		{"shares overflowing", open, body(open, "yes", "buy", "1e400", ""), 400, "", "shares"},
		{"shares as a string", open, body(open, "yes", "buy", `"5"`, ""), 400, "", "shares"},
		{"shares null", open, body(open, "yes", "buy", "null", ""), 400, "", "shares"},
		{"type not buy or sell", open, body(open, "yes", "hold", "1", ""), 400, "", "type"},
		{"reasoning 1001 runes", open, body(open, "yes", "buy", "1", `,"reasoning":"`+strings.Repeat("é", 1001)+`"`), 400, "", "reasoning"},
		{"reasoning not a string", open, body(open, "yes", "buy", "1", `,"reasoning":5`), 400, "", "reasoning"},
		{"max_cost negative", open, body(open, "yes", "buy", "1", `,"max_cost":-1`), 400, "", "max_cost"},
		{"max_cost 7 decimals", open, body(open, "yes", "buy", "1", `,"max_cost":0.0000001`), 400, "", "max_cost"},
		{"max_cost on a sell", open, body(open, "yes", "sell", "1", `,"max_cost":5`), 400, "", "max_cost"},
		{"min_proceeds on a buy", open, body(open, "yes", "buy", "1", `,"min_proceeds":5`), 400, "", "min_proceeds"},
		{"unknown field", open, body(open, "yes", "buy", "1", `,"price":0.5`), 400, "", "price"},
		// Fields, in the workflow shape: named as the client sent them.
		{"workflow marketId missing", open, `{"outcome":"yes","side":"buy","amount":1}`, 400, "", "marketId"},
		{"workflow outcome invalid", open, fmt.Sprintf(`{"marketId":%q,"outcome":"maybe","side":"buy","amount":1}`, open), 400, "", "outcome"},
		{"workflow side invalid", open, fmt.Sprintf(`{"marketId":%q,"outcome":"yes","side":"hold","amount":1}`, open), 400, "", "side"},
		{"workflow amount zero", open, fmt.Sprintf(`{"marketId":%q,"outcome":"yes","side":"buy","amount":0}`, open), 400, "", "amount"},
		{"shapes mixed", open, fmt.Sprintf(`{"market_id":%q,"outcome":"yes","shares":1}`, open), 400, "", ""},
		// Each later check, alone and before the ones after it.
		{"fields before market not found", open, body(unknown, "yes", "buy", "0", ""), 400, "", "shares"},
		{"market not found", open, body(unknown, "yes", "buy", "1", ""), 404, "Market not found", ""},
		{"workflow market not found", open, fmt.Sprintf(`{"marketId":%q,"outcome":"yes","side":"buy","amount":1}`, unknown), 404, "Market not found", ""},
		{"closed market buy", closed, body(closed, "yes", "buy", "1", ""), 400, "Market is not active", ""},
		{"closed market sell of shares held", closed, body(closed, "yes", "sell", "1", ""), 400, "Market is not active", ""},
		{"not active before insufficient shares", closed, body(closed, "no", "sell", "5", ""), 400, "Market is not active", ""},
		{"resolved market", resolved, body(resolved, "yes", "buy", "1", ""), 400, "Market is not active", ""},
		{"insufficient shares", open, body(open, "yes", "sell", "10.000001", ""), 400, "Insufficient shares", ""},
		{"insufficient shares before liquidity", open, body(open, "no", "sell", "1", ""), 400, "Insufficient shares", ""},
		{"slippage on a buy", open, body(open, "yes", "buy", "1", `,"max_cost":0`), 400, "Slippage limit exceeded", ""},
		{"slippage on a sell", open, body(open, "yes", "sell", "1", `,"min_proceeds":1`), 400, "Slippage limit exceeded", ""},
		{"slippage before balance", open, body(open, "yes", "buy", "100000", `,"max_cost":1`), 400, "Slippage limit exceeded", ""},
		{"insufficient balance", open, body(open, "yes", "buy", "100000", ""), 400, "Insufficient balance", ""},
		{"insufficient balance under a loose max_cost", open, body(open, "no", "buy", "100000", `,"max_cost":1000000000`), 400, "Insufficient balance", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.observe(a, tt.market)
			ts.expectError(ts.do("POST", "/api/markets/trade", a, tt.body), tt.status, tt.msg, tt.field)
			ts.unchanged(a, tt.market, before)
		})
	}
	// The closed market shows as closed; its trader still holds the share.
	if m := ts.market(closed); m.Status != "closed" {
		t.Errorf("market past closes_at: status %q, want closed", m.Status)
	}
}

// TestTradeAtClosingTime trades until the last nanosecond before closes_at
// and is refused from closes_at on, when the market shows as closed.
func TestTradeAtClosingTime(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	a := auth{session: ts.register("trader")}
	closesAt := clk.Now().Add(time.Hour)
	id := ts.createMarket(adm, map[string]any{"closes_at": iso(closesAt)}).ID.String()

	clk.Advance(time.Hour - time.Nanosecond)
	ts.trade(a, id, "yes", "buy", "1")
	ts.splitMerge(a, id, "split", "1")
	if m := ts.market(id); m.Status != "active" {
		t.Fatalf("a nanosecond before closes_at: status %q, want active", m.Status)
	}
	clk.Advance(time.Nanosecond)
	if m := ts.market(id); m.Status != "closed" {
		t.Fatalf("at closes_at: status %q, want closed", m.Status)
	}
	for _, body := range []string{
		fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1}`, id),
		fmt.Sprintf(`{"market_id":%q,"side":"yes","type":"sell","shares":1}`, id),
		fmt.Sprintf(`{"marketId":%q,"outcome":"no","side":"buy","amount":1}`, id),
	} {
		before := ts.observe(a, id)
		ts.expect(ts.do("POST", "/api/markets/trade", a, body), http.StatusBadRequest, "Market is not active")
		ts.unchanged(a, id, before)
	}
	for _, typ := range []string{"split", "merge"} {
		before := ts.observe(a, id)
		ts.expect(ts.do("POST", "/api/markets/split-merge", a, fmt.Sprintf(`{"market_id":%q,"type":%q,"amount":1}`, id, typ)),
			http.StatusBadRequest, "Market is not active")
		ts.unchanged(a, id, before)
	}
}

// TestTradeLiquidityLimit buys a market's q_yes up to 1e10, the most
// docs/API.md, "POST /api/markets/trade", allows, and checks that any further
// buy of yes answers 400 "Market liquidity limit", before the slippage and
// balance checks, while no can still be bought.
func TestTradeLiquidityLimit(t *testing.T) {
	// Each buyer has the largest bonus core takes (1e9) and buys 1e9 yes,
	// which costs it a little less: nine of them take q_yes from 1e9 to
	// 1e10.
	ts, _ := newClockServer(t, Config{SignupBonus: core.MaxAmount}, nil)
	adm := ts.admin()
	id := ts.createMarket(adm, map[string]any{"liquidity": 1e9}).ID.String()
	var buyers []auth
	for i := range 9 {
		buyers = append(buyers, auth{session: ts.register(fmt.Sprintf("buyer%d", i))})
		ts.trade(buyers[i], id, "yes", "buy", "1000000000")
	}
	if m := ts.market(id); m.Liquidity.QYes != pricing.MaxQ {
		t.Fatalf("q_yes %v, want %v", m.Liquidity.QYes, pricing.MaxQ)
	}
	// poor puts its whole balance into a split and a buy elsewhere:
	// balance 0. The buy is the largest whose cost is what the split left
	// (on a deep market a micro-share costs at most a micro-unit, so one
	// costs exactly that).
	rich := auth{session: ts.register("rich")}
	poor := auth{session: ts.register("poor")}
	ts.splitMerge(poor, ts.createMarket(adm, nil).ID.String(), "split", "950000000")
	deep := ts.createMarket(adm, map[string]any{"liquidity": 1e9})
	left := ts.profile(poor).Agent.Balance
	q := [2]money.Amount{deep.Liquidity.QYes, deep.Liquidity.QNo}
	lo, hi := money.Amount(1), 2*left // cost(lo) <= left < cost(hi)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if c, err := pricing.BuyCost(deep.Liquidity.Alpha, q, 0, mid); err != nil || c > left {
			hi = mid
		} else {
			lo = mid
		}
	}
	ts.trade(poor, deep.ID.String(), "yes", "buy", lo.String())
	if b := ts.profile(poor).Agent.Balance; b != 0 {
		t.Fatalf("poor kept %s after spending it all", b)
	}

	tests := []struct {
		name string
		a    auth
		body string
		msg  string
	}{
		{"one micro-share past 1e10", rich, fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":0.000001}`, id), "Market liquidity limit"},
		{"before slippage and balance", poor, fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1,"max_cost":0}`, id), "Market liquidity limit"},
		{"workflow shape", rich, fmt.Sprintf(`{"marketId":%q,"outcome":"yes","side":"buy","amount":1000000000}`, id), "Market liquidity limit"},
		{"by a holder", buyers[0], fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1}`, id), "Market liquidity limit"},
		{"balance after the limit check passes", poor, fmt.Sprintf(`{"market_id":%q,"side":"no","shares":1}`, id), "Insufficient balance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.observe(tt.a, id)
			ts.expect(ts.do("POST", "/api/markets/trade", tt.a, tt.body), http.StatusBadRequest, tt.msg)
			ts.unchanged(tt.a, id, before)
		})
	}
	ts.trade(rich, id, "no", "buy", "1")
	ts.trade(buyers[0], id, "yes", "sell", "1")
}

// TestSplitMerge splits and merges and checks the answers against the
// curve (a split of n costs C(q + n(1,1)) - C(q) rounded up, a merge pays
// C(q) - C(q - n(1,1)) rounded down, docs/API.md "Split and merge"), the
// positions (a split's basis to each side in proportion to its price), q
// moved by n on both sides, and the ledger.
func TestSplitMerge(t *testing.T) {
	ts, _ := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	sess := ts.register("trader")
	a := auth{session: sess}
	key := ts.newKey(sess, "trade")
	m := ts.createMarket(adm, nil)
	id, alpha := m.ID, m.Liquidity.Alpha
	q := [2]money.Amount{money.Units(1000), money.Units(1000)}
	balance := money.Units(1000)
	var held, basis [2]money.Amount

	steps := []struct {
		name  string
		a     auth
		merge bool
		n     money.Amount
	}{
		{"split", a, false, money.Units(10)},
		{"merge part, with a key", auth{key: key}, true, money.Units(4)},
		{"split an odd micro-amount", a, false, 3},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			ts := ts.sub(t)
			typ, quote, tx := "split", pricing.QuoteSplit, "split"
			if st.merge {
				typ, quote, tx = "merge", pricing.QuoteMerge, "merge"
			}
			pq, err := quote(alpha, q, st.n)
			if err != nil {
				t.Fatal(err)
			}
			if st.merge {
				balance += pq.Amount
				for side := range 2 {
					basis[side] -= basis[side] * st.n / held[side] // exact here: held divides evenly
					held[side] -= st.n
				}
			} else {
				balance -= pq.Amount
				yes := money.Amount(float64(pq.Amount) * pq.PricesAfter[0] / (pq.PricesAfter[0] + pq.PricesAfter[1]))
				basis[0] += yes
				basis[1] += pq.Amount - yes
				held[0] += st.n
				held[1] += st.n
			}
			q = pq.QAfter
			r := ts.do("POST", "/api/markets/split-merge", st.a, fmt.Sprintf(`{"market_id":%q,"type":%q,"amount":%s}`, id, typ, st.n))
			ts.expect(r, http.StatusOK, "")
			checkFields(t, "split-merge", r.json(t), map[string]fieldKind{"market_id": kindUUID, "type": kindString,
				"currency": kindString, "amount": kindNumber, "cost": kindNumber, "vig": kindNumber,
				"balance_after": kindNumber, "yes_shares": kindNumber, "no_shares": kindNumber,
				"price_yes_after": kindNumber, "price_no_after": kindNumber})
			var got wire.SplitMerge
			ts.decode(r, http.StatusOK, &got)
			want := wire.SplitMerge{MarketID: uuid.MustParse(id.String()), Type: typ, Currency: "kp", Amount: st.n, Cost: pq.Amount,
				Vig: pq.Vig, BalanceAfter: balance, YesShares: held[0], NoShares: held[1],
				PriceYesAfter: pq.PricesAfter[0], PriceNoAfter: pq.PricesAfter[1], MarketSeq: got.MarketSeq}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			// A complete set costs more than 1 on the curve: the overround.
			if !st.merge && got.Cost <= st.n || got.Vig <= 0 && st.n > 100 {
				t.Errorf("%s of %s cost %s, vig %s: want more than par and a vig", typ, st.n, got.Cost, got.Vig)
			}
			p := ts.profile(a)
			for side, name := range sideNames {
				pos := heldPosition(p, id.String(), name)
				want := wire.Position{MarketID: uuid.MustParse(id.String()), Side: name, Currency: "kp", Shares: held[side], Cost: basis[side],
					AvgPrice: basis[side].Float() / held[side].Float()}
				if pos != want {
					t.Errorf("%s position %+v, want %+v", name, pos, want)
				}
			}
			if m := ts.market(id.String()); m.Liquidity.QYes != q[0] || m.Liquidity.QNo != q[1] || m.Volume != 0 {
				t.Errorf("market q %v/%v volume %v: want q %v moved by the sets, no trade volume", m.Liquidity.QYes, m.Liquidity.QNo, m.Volume, q)
			}
			e := ts.points(a, "?limit=1").Ledger[0]
			ledg := -pq.Amount
			if st.merge {
				ledg = pq.Amount
			}
			if e.TxType != tx || e.Amount != ledg || e.BalanceAfter != balance {
				t.Errorf("ledger entry %+v, want %s of %v, balance_after %v", e, tx, ledg, balance)
			}
		})
	}
}

// TestSplitMergeRefused covers every error of the split-merge endpoint;
// none changes anything.
func TestSplitMergeRefused(t *testing.T) {
	ts, clk := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	a := auth{session: ts.register("trader")}
	id := ts.createMarket(adm, nil).ID.String()
	closed := ts.createMarket(adm, map[string]any{"closes_at": iso(clk.Now().Add(time.Hour))}).ID.String()
	ts.splitMerge(a, id, "split", "6")
	ts.trade(a, id, "yes", "buy", "2") // 8 yes, 6 no
	ts.splitMerge(a, closed, "split", "1")
	clk.Advance(2 * time.Hour)

	body := func(market, typ, amount string) string {
		return fmt.Sprintf(`{"market_id":%q,"type":%q,"amount":%s}`, market, typ, amount)
	}
	tests := []struct {
		name   string
		market string
		body   string
		status int
		msg    string
		field  string
	}{
		{"market_id missing", id, `{"type":"split","amount":1}`, 400, "", "market_id"},
		{"market_id malformed", id, body("x", "split", "1"), 400, "", "market_id"},
		{"amount missing", id, fmt.Sprintf(`{"market_id":%q,"type":"split"}`, id), 400, "", "amount"},
		{"amount zero", id, body(id, "split", "0"), 400, "", "amount"},
		{"amount negative", id, body(id, "merge", "-1"), 400, "", "amount"},
		{"amount over 1e9", id, body(id, "split", "1000000000.000001"), 400, "", "amount"},
		{"amount 7 decimals", id, body(id, "split", "0.0000001"), 400, "", "amount"},
		{"amount as a string", id, body(id, "split", `"1"`), 400, "", "amount"},
		{"type missing", id, fmt.Sprintf(`{"market_id":%q,"amount":1}`, id), 400, "", "type"},
		{"type unknown", id, body(id, "swap", "1"), 400, "", "type"},
		{"unknown field", id, fmt.Sprintf(`{"market_id":%q,"type":"split","amount":1,"side":"yes"}`, id), 400, "", "side"},
		{"unknown market", id, body(uuid.NewString(), "split", "1"), 404, "Market not found", ""},
		{"merge more than held", id, body(id, "merge", "6.000001"), 400, "Insufficient shares", ""},
		{"merge with one side short", id, body(id, "merge", "7"), 400, "Insufficient shares", ""},
		{"split more than the balance", id, body(id, "split", "1000"), 400, "Insufficient balance", ""},
		{"split past max_cost", id, fmt.Sprintf(`{"market_id":%q,"type":"split","amount":1,"max_cost":1}`, id), 400, "Slippage limit exceeded", ""},
		{"merge under min_proceeds", id, fmt.Sprintf(`{"market_id":%q,"type":"merge","amount":1,"min_proceeds":1.1}`, id), 400, "Slippage limit exceeded", ""},
		{"slippage before balance", id, fmt.Sprintf(`{"market_id":%q,"type":"split","amount":1000,"max_cost":1}`, id), 400, "Slippage limit exceeded", ""},
		{"min_proceeds on a split", id, fmt.Sprintf(`{"market_id":%q,"type":"split","amount":1,"min_proceeds":1}`, id), 400, "", "min_proceeds"},
		{"max_cost negative", id, fmt.Sprintf(`{"market_id":%q,"type":"split","amount":1,"max_cost":-1}`, id), 400, "", "max_cost"},
		{"closed market", closed, body(closed, "merge", "1"), 400, "Market is not active", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := ts.sub(t)
			before := ts.observe(a, tt.market)
			ts.expectError(ts.do("POST", "/api/markets/split-merge", a, tt.body), tt.status, tt.msg, tt.field)
			ts.unchanged(a, tt.market, before)
		})
	}
}

// TestPointsPaging checks the ledger's default page of 100, its largest
// page of 1000 and the errors of its paging parameters.
func TestPointsPaging(t *testing.T) {
	ts, _ := newClockServer(t, Config{}, nil)
	adm := ts.admin()
	a := auth{session: ts.register("trader")}
	id := ts.createMarket(adm, nil).ID.String()
	const trades = defaultLedgerLimit // with the signup bonus, one more entry than a default page
	for range trades {
		ts.trade(a, id, "yes", "buy", "0.01")
	}
	all := ts.points(a, "?limit=1000")
	tests := []struct {
		query string
		from  int // index in all of the first item
		n     int
		limit int
	}{
		{"", 0, defaultLedgerLimit, defaultLedgerLimit},
		{"?offset=100", 100, 1, defaultLedgerLimit},
		{"?limit=1000", 0, trades + 1, maxLedgerLimit},
		{"?limit=3&offset=98", 98, 3, 3},
		{"?offset=101", 0, 0, defaultLedgerLimit},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			ts := ts.sub(t)
			p := ts.points(a, tt.query)
			if p.Count != trades+1 || p.Limit != tt.limit || len(p.Ledger) != tt.n {
				t.Fatalf("count %d, limit %d, %d items; want %d, %d, %d", p.Count, p.Limit, len(p.Ledger), trades+1, tt.limit, tt.n)
			}
			for i, e := range p.Ledger {
				if e != all.Ledger[tt.from+i] {
					t.Errorf("item %d = %+v, want %+v", i, e, all.Ledger[tt.from+i])
				}
			}
		})
	}
	if last := all.Ledger[trades]; last.TxType != "signup_bonus" {
		t.Errorf("oldest entry %+v, want the signup bonus", last)
	}
	for _, tt := range []struct{ query, field string }{
		{"?limit=0", "limit"},
		{"?limit=1001", "limit"},
		{"?limit=-5", "limit"},
		{"?limit=many", "limit"},
		{"?limit=", "limit"},
		{"?offset=-1", "offset"},
		{"?offset=x", "offset"},
	} {
		t.Run("invalid "+tt.query, func(t *testing.T) {
			ts := ts.sub(t)
			ts.expectField(ts.do("GET", "/api/points"+tt.query, a, ""), tt.field)
		})
	}
}
