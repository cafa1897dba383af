package main

import (
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"marketd/core/money"
	"marketd/transport/wire"
)

// TestBotWorkflow runs the client workflow of README.md, "A bot's first
// minutes", against the real
// binary: register, create a key, read the profile with it, list markets
// (created by the admin), read the points, trade in both request shapes,
// split and merge, then the admin settles and reads the stats.
func TestBotWorkflow(t *testing.T) {
	t.Parallel()
	p := startProc(t, "marketd", procOptions{dataDir: t.TempDir()})
	c := p.client(nil)

	// Register: a session cookie and the signup bonus.
	aliceTok, agent := c.register("alice_bot")
	alice := sessionCred(aliceTok)
	if agent.Name != "alice_bot" || agent.Role != "speculator" || agent.Balance != money.Units(1000) || agent.TradingMode != "kp" {
		t.Fatalf("registered agent %+v, want alice_bot, speculator, balance 1000, kp", agent)
	}

	// A key, made with the session; a key cannot make keys.
	k := c.createKey(alice, "trading bot", []string{"read", "trade"}, nil)
	if !strings.HasPrefix(k.Key, "svc_live_") || len(k.Key) != len("svc_live_")+32 || k.KeyPrefix != k.Key[:17] ||
		k.ExpiresAt != nil || k.RateLimitTier != "standard" || !slices.Equal(k.Scopes, []string{"read", "trade"}) {
		t.Fatalf("new key %+v: want svc_live_ and 32 characters, its first 17 as prefix, no expiry, standard, read+trade", k)
	}
	bot := keyCred(k.Key)
	c.mustError(http.MethodPost, "/api/keys", bot, map[string]any{"name": "x", "scopes": []string{"read"}},
		http.StatusForbidden, "Session required")

	// The bot reads its identity with the key.
	me := c.me(bot)
	if me.Agent.ID != agent.ID || me.Agent.Balance != money.Units(1000) || me.Auth.Method != "api_key" ||
		!slices.Equal(me.Auth.Scopes, []string{"read", "trade"}) || len(me.Positions) != 0 {
		t.Fatalf("GET /api/agents/me: %+v", me)
	}
	if ak := me.APIKey; ak == nil || ak.ID != k.ID || ak.Prefix != k.KeyPrefix || ak.TotalRequests != 2 || ak.Name != "trading bot" {
		t.Fatalf("GET /api/agents/me: api_key %+v, want key %s, prefix %s, 2 requests so far", ak, k.ID, k.KeyPrefix)
	}

	// The admin logs in and creates markets; a speculator may not.
	admin := sessionCred(c.login("admin", testAdminPassword))
	rain := c.createMarket(admin, "Will it rain", nil)
	snow := c.createMarket(admin, "Will it snow", map[string]any{"liquidity": 500, "category": "weather"})
	for _, m := range []wire.Market{rain, snow} {
		// At q_yes = q_no the prices sum to 1 + alpha 2 ln 2 (docs/API.md,
		// "The market object").
		sum, want := m.Prices.Yes+m.Prices.No, 1+m.Liquidity.Alpha*2*math.Ln2
		if m.Status != "active" || m.Prices.Yes != m.Prices.No || math.Abs(sum-want) > 1e-12 || m.Outcome != nil {
			t.Fatalf("new market %+v: want active, equal prices summing to %v, no outcome", m, want)
		}
	}
	if rain.Liquidity.QYes != money.Units(1000) || snow.Liquidity.QNo != money.Units(500) {
		t.Fatalf("initial q: %s and %s, want 1000 (default) and 500", rain.Liquidity.QYes, snow.Liquidity.QNo)
	}
	c.mustError(http.MethodPost, "/api/markets", alice,
		map[string]any{"title": "x", "category": "x", "closes_at": "2099-01-01T00:00:00Z"},
		http.StatusForbidden, "Admin role required")

	// The workflow: active markets, points, a trade.
	var active wire.MarketList
	c.must(http.MethodGet, "/api/markets/active", bot, nil, http.StatusOK, &active)
	if active.Count != 2 || len(active.Markets) != 2 || active.Markets[0].ID != snow.ID || active.Markets[1].ID != rain.ID {
		t.Fatalf("active markets %+v: want snow then rain (newest first)", active)
	}
	pts := c.points(bot)
	if pts.Balance != money.Units(1000) || len(pts.Ledger) != 1 || pts.Ledger[0].TxType != "signup_bonus" ||
		pts.Ledger[0].Amount != money.Units(1000) {
		t.Fatalf("points of a new account: %+v, want 1000 from one signup_bonus entry", pts)
	}

	buy := c.trade(bot, rain.ID.String(), "yes", "buy", "10")
	if buy.Type != "buy" || buy.Side != "yes" || buy.Shares != money.Units(10) || buy.BalanceAfter != money.Units(1000)-buy.Cost ||
		buy.PriceYesAfter <= rain.Prices.Yes || buy.PriceNoAfter >= rain.Prices.No {
		t.Fatalf("buy 10 yes at %v: %+v", rain.Prices, buy)
	}
	checkCostBetween(t, "buy 10 yes", buy.Cost, 10, rain.Prices.Yes, buy.PriceYesAfter)

	// The workflow shape of docs/API.md, "POST /api/markets/trade".
	var wf wire.Trade
	c.must(http.MethodPost, "/api/markets/trade", bot, map[string]any{"marketId": snow.ID, "outcome": "no",
		"side": "buy", "amount": 5, "reasoning": "snow is unlikely"}, http.StatusOK, &wf)
	if wf.MarketID != snow.ID || wf.Side != "no" || wf.Type != "buy" || wf.Shares != money.Units(5) ||
		wf.BalanceAfter != buy.BalanceAfter-wf.Cost {
		t.Fatalf("workflow-shape buy of 5 no: %+v", wf)
	}

	sell := c.trade(bot, rain.ID.String(), "yes", "sell", "4")
	if sell.Type != "sell" || sell.BalanceAfter != wf.BalanceAfter+sell.Cost || sell.PriceYesAfter >= buy.PriceYesAfter {
		t.Fatalf("sell 4 yes: %+v", sell)
	}
	checkCostBetween(t, "sell 4 yes", sell.Cost, 4, sell.PriceYesAfter, buy.PriceYesAfter)

	// Split and merge are trades of complete sets on the curve: a split
	// costs more than par (the overround), a merge pays less than the
	// split cost, and both move q, so the prices move too.
	sp := c.splitMerge(bot, rain.ID.String(), "split", "20")
	if sp.BalanceAfter != sell.BalanceAfter-sp.Cost || sp.Cost <= money.Units(20) || sp.Vig <= 0 ||
		sp.YesShares != money.Units(26) || sp.NoShares != money.Units(20) {
		t.Fatalf("split 20 with 6 yes held: %+v, want a cost above 20, 26 yes, 20 no", sp)
	}
	checkCostBetween(t, "split 20", sp.Cost, 20, sell.PriceYesAfter+sell.PriceNoAfter, sp.PriceYesAfter+sp.PriceNoAfter)
	mg := c.splitMerge(bot, rain.ID.String(), "merge", "5.5")
	if mg.BalanceAfter != sp.BalanceAfter+mg.Cost || mg.Cost <= money.Amount(5_500_000) || mg.Cost >= sp.Cost ||
		mg.YesShares != money.Amount(20_500_000) || mg.NoShares != money.Amount(14_500_000) {
		t.Fatalf("merge 5.5: %+v, want 20.5 yes, 14.5 no", mg)
	}
	if m := c.market(rain.ID.String()); m.Prices.Yes != mg.PriceYesAfter || m.Prices.No != mg.PriceNoAfter {
		t.Fatalf("prices after split and merge %v, want %v, %v as the merge answered", m.Prices, mg.PriceYesAfter, mg.PriceNoAfter)
	}

	// Refusals.
	c.mustError(http.MethodPost, "/api/markets/trade", bot, tradeBody(rain.ID.String(), "no", "sell", "100"),
		http.StatusBadRequest, "Insufficient shares")
	readOnly := c.createKey(alice, "reader", []string{"read"}, nil)
	c.mustError(http.MethodPost, "/api/markets/trade", keyCred(readOnly.Key), tradeBody(rain.ID.String(), "yes", "buy", "1"),
		http.StatusForbidden, "Insufficient scope")
	c.mustError(http.MethodGet, "/api/agents/me", keyCred("svc_live_"+strings.Repeat("0", 32)), nil,
		http.StatusUnauthorized, "Authentication required")

	// The profile and the ledger tell the same story.
	me = c.me(bot)
	for _, want := range []struct {
		market, side string
		shares       money.Amount
	}{{rain.ID.String(), "yes", money.Amount(20_500_000)}, {rain.ID.String(), "no", money.Amount(14_500_000)}, {snow.ID.String(), "no", money.Units(5)}} {
		if got := heldShares(&me, want.market, want.side); got != want.shares {
			t.Errorf("position %s %s: %s shares, want %s", want.market, want.side, got, want.shares)
		}
	}
	if len(me.Positions) != 3 || me.Stats.OpenPositions != 3 || me.Agent.Balance != mg.BalanceAfter {
		t.Errorf("profile: %d positions (stats %d), balance %s; want 3, balance %s", len(me.Positions),
			me.Stats.OpenPositions, me.Agent.Balance, mg.BalanceAfter)
	}
	var recent []string
	for _, tr := range me.RecentTrades {
		recent = append(recent, tr.TradeID.String())
	}
	if !slices.Equal(recent, []string{sell.TradeID.String(), wf.TradeID.String(), buy.TradeID.String()}) || me.RecentTrades[1].Reasoning != "snow is unlikely" {
		t.Errorf("recent_trades %+v, want sell, workflow buy (with its reasoning), buy", me.RecentTrades)
	}
	pts = c.points(bot)
	checkLedger(t, "alice_bot", pts)
	wantLedger := []struct {
		txType string
		amount money.Amount
		ref    string
	}{
		{"merge", mg.Cost, ""},
		{"split", -sp.Cost, ""},
		{"trade_sell", sell.Cost, sell.TradeID.String()},
		{"trade_buy", -wf.Cost, wf.TradeID.String()},
		{"trade_buy", -buy.Cost, buy.TradeID.String()},
		{"signup_bonus", money.Units(1000), ""},
	}
	if len(pts.Ledger) != len(wantLedger) {
		t.Fatalf("ledger %+v: want %d entries", pts.Ledger, len(wantLedger))
	}
	for i, w := range wantLedger {
		e := pts.Ledger[i]
		if e.TxType != w.txType || e.Amount != w.amount || (w.ref != "" && e.RefID.String() != w.ref) {
			t.Errorf("ledger entry %d: %s %s ref %s, want %s %s ref %s", i, e.TxType, e.Amount, e.RefID, w.txType, w.amount, w.ref)
		}
	}

	// Settlement pays each winning share 1 KP.
	var st settleJSON
	c.must(http.MethodPost, "/api/admin/settle", admin, map[string]any{"market_id": rain.ID, "outcome": "yes"}, http.StatusOK, &st)
	if st.MarketID != rain.ID.String() || st.Outcome != "yes" || st.PositionsPaid != 1 || st.TotalPaid != money.Amount(20_500_000) {
		t.Fatalf("settle: %+v, want 1 position paid 20.5", st)
	}
	c.mustError(http.MethodPost, "/api/admin/settle", admin, map[string]any{"market_id": rain.ID, "outcome": "no"},
		http.StatusBadRequest, "Market already resolved")
	c.mustError(http.MethodPost, "/api/admin/settle", bot, map[string]any{"market_id": snow.ID, "outcome": "no"},
		http.StatusForbidden, "Insufficient scope")
	if m := c.market(rain.ID.String()); m.Status != "resolved" || m.Outcome == nil || *m.Outcome != "yes" {
		t.Fatalf("settled market: status %s, outcome %v", m.Status, m.Outcome)
	}
	c.must(http.MethodGet, "/api/markets/active", cred{}, nil, http.StatusOK, &active)
	if active.Count != 1 || active.Markets[0].ID != snow.ID {
		t.Fatalf("active markets after settling rain: %+v", active)
	}
	c.mustError(http.MethodPost, "/api/markets/trade", bot, tradeBody(rain.ID.String(), "yes", "buy", "1"),
		http.StatusBadRequest, "Market is not active")
	pts = c.points(bot)
	checkLedger(t, "alice_bot", pts)
	if e := pts.Ledger[0]; e.TxType != "settlement_payout" || e.Amount != st.TotalPaid || pts.Balance != mg.BalanceAfter+st.TotalPaid {
		t.Fatalf("after settlement: balance %s, newest entry %+v; want a settlement_payout of %s", pts.Balance, e, st.TotalPaid)
	}

	// The platform's statistics.
	stats := c.stats(admin)
	m := stats.Markets
	if stats.Accounts != 2 || m.Active != 1 || m.Resolved != 1 || m.Total != 2 || stats.Trades.KP != 3 ||
		stats.Volume.KP != buy.Cost+wf.Cost+sell.Cost || stats.OpenInterest.KP != money.Units(5) || stats.ActiveKeys != 2 {
		t.Fatalf("stats %+v: want 2 accounts, 1 active and 1 resolved market, 3 trades of volume %s, open interest 5, 2 keys",
			stats, buy.Cost+wf.Cost+sell.Cost)
	}
	if stats.WAL == nil || stats.WAL.DurableSeq != stats.WAL.LastSeq {
		t.Fatalf("stats wal %+v: want every record durable", stats.WAL)
	}
	c.mustError(http.MethodGet, "/api/admin/stats", alice, nil, http.StatusForbidden, "Admin role required")
}

// checkCostBetween checks a trade's cost against the marginal prices at
// its two ends: the LS-LMSR cost function is convex, so n shares cost
// between n times the lower and n times the higher price (give or take
// the rounding to micro-units).
func checkCostBetween(t *testing.T, what string, cost money.Amount, n, lowPrice, highPrice float64) {
	t.Helper()
	lo, hi := n*lowPrice-1e-6, n*highPrice+1e-6
	if c := cost.Float(); c < lo || c > hi {
		t.Fatalf("%s: cost %s, want between %.6f and %.6f", what, cost, lo, hi)
	}
}
