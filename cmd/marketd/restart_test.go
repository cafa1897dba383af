package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"marketd/core/money"
	"marketd/transport/wire"
)

// usageFlushWait is how long after a key's last use its total_requests is sure
// to be on disk: docs/API.md, "Authentication", lets the count lag by at most a
// second after a crash; the rest is margin for the flush's commit on a loaded
// 2-core machine running race-instrumented servers in parallel.
const usageFlushWait = 1500 * time.Millisecond

// account is a registered account of a scenario.
type account struct {
	name    string
	id      string
	session cred // a session that stays valid
}

// ackedTrade is a trade the server answered with 200.
type ackedTrade struct {
	who string
	wire.Trade
}

// ackedSplit is a split or merge the server answered with 200.
type ackedSplit struct {
	who string
	wire.SplitMerge
}

// history is what a scenario did and every answer it got: what any
// restart must give back.
type history struct {
	admin    cred
	markets  []wire.Market // as created
	accounts []*account    // admin first
	trades   []ackedTrade
	splits   []ackedSplit
	settled  map[string]settleJSON // by market ID
	// Keys by secret: liveKeys work, deadKeys (revoked or rotated away)
	// must get 401; the value is the key's ID.
	liveKeys, deadKeys map[string]string
	// keyStatus is each key's status in GET /api/keys, by key ID.
	keyStatus    map[string]string
	liveSessions []cred
	deadSessions []cred // logged out
	lastKeyUse   time.Time
}

func (h *history) account(name string) *account {
	for _, a := range h.accounts {
		if a.name == name {
			return a
		}
	}
	panic("BUG: no account " + name)
}

func (h *history) trade(c *client, who string, cr cred, market *wire.Market, side, typ, shares string) {
	c.t.Helper()
	tr := c.trade(cr, market.ID.String(), side, typ, shares)
	h.trades = append(h.trades, ackedTrade{who: who, Trade: tr})
	if cr.key != "" {
		h.lastKeyUse = time.Now()
	}
}

func (h *history) split(c *client, who string, cr cred, market *wire.Market, typ, amount string) {
	c.t.Helper()
	s := c.splitMerge(cr, market.ID.String(), typ, amount)
	h.splits = append(h.splits, ackedSplit{who: who, SplitMerge: s})
	if cr.key != "" {
		h.lastKeyUse = time.Now()
	}
}

// runScenario makes a series of acknowledged changes of every kind:
// accounts, sessions (one logged out), keys (one revoked, one rotated),
// trades over three markets with keys and sessions, splits and merges, a
// settlement, and key uses that were refused after authentication.
func runScenario(t *testing.T, c *client) *history {
	t.Helper()
	h := &history{settled: map[string]settleJSON{}, liveKeys: map[string]string{}, deadKeys: map[string]string{},
		keyStatus: map[string]string{}}
	h.admin = sessionCred(c.login("admin", testAdminPassword))
	adminID := c.me(h.admin).Agent.ID
	h.accounts = append(h.accounts, &account{name: "admin", id: adminID.String(), session: h.admin})
	h.liveSessions = append(h.liveSessions, h.admin)
	for i, extra := range []map[string]any{nil, {"liquidity": 250, "alpha": 0.1}, {"category": "other"}} {
		h.markets = append(h.markets, c.createMarket(h.admin, fmt.Sprintf("restart market %d", i), extra))
	}
	m0, m1, m2 := &h.markets[0], &h.markets[1], &h.markets[2]
	for _, name := range []string{"alice", "bob", "carol"} {
		tok, ag := c.register(name)
		h.accounts = append(h.accounts, &account{name: name, id: ag.ID.String(), session: sessionCred(tok)})
		h.liveSessions = append(h.liveSessions, sessionCred(tok))
	}
	alice, bob, carol := h.account("alice").session, h.account("bob").session, h.account("carol").session

	// A second session of alice's, logged out; one of bob's, kept.
	spare := sessionCred(c.login("alice", ""))
	c.must(http.MethodPost, "/api/auth/logout", spare, nil, http.StatusOK, nil)
	c.mustError(http.MethodGet, "/api/agents/me", spare, nil, http.StatusUnauthorized, "Authentication required")
	h.deadSessions = append(h.deadSessions, spare)
	bob2 := sessionCred(c.login("bob", ""))
	h.liveSessions = append(h.liveSessions, bob2)

	// Keys: one for trading, one revoked after a use, one rotated after a
	// use, and carol's.
	kTrade := c.createKey(alice, "trader", []string{"read", "trade"}, nil)
	kRead := c.createKey(alice, "reader", []string{"read"}, nil)
	kOld := c.createKey(alice, "rotating", []string{"read", "trade"}, map[string]any{"expires_in_days": 30})
	kCarol := c.createKey(carol, "carol bot", []string{"read", "trade"}, nil)
	c.points(keyCred(kRead.Key))
	var revoked struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	c.must(http.MethodDelete, "/api/keys/"+kRead.ID.String(), alice, nil, http.StatusOK, &revoked)
	if revoked.ID != kRead.ID.String() || revoked.Status != "revoked" {
		t.Fatalf("revoke: %+v", revoked)
	}
	c.me(keyCred(kOld.Key))
	var kNew wire.NewKey
	c.must(http.MethodPost, "/api/keys/"+kOld.ID.String()+"/rotate", alice, nil, http.StatusCreated, &kNew)
	if kNew.ID == kOld.ID || kNew.Key == kOld.Key || !slices.Equal(kNew.Scopes, kOld.Scopes) || kNew.ExpiresAt == nil {
		t.Fatalf("rotated key %+v of %+v: want a new key with the same scopes and an expiry", kNew, kOld)
	}
	c.mustError(http.MethodGet, "/api/agents/me", keyCred(kOld.Key), nil, http.StatusUnauthorized, "Authentication required")
	for _, k := range []wire.NewKey{kTrade, kNew, kCarol} {
		h.liveKeys[k.Key] = k.ID.String()
		h.keyStatus[k.ID.String()] = "active"
	}
	for _, k := range []wire.NewKey{kRead, kOld} {
		h.deadKeys[k.Key] = k.ID.String()
		h.keyStatus[k.ID.String()] = "revoked"
	}

	// Trades and splits over the three markets, with keys and sessions.
	trade, rotated, carolKey := keyCred(kTrade.Key), keyCred(kNew.Key), keyCred(kCarol.Key)
	h.trade(c, "alice", trade, m0, "yes", "buy", "10")
	h.trade(c, "alice", trade, m1, "no", "buy", "7.5")
	h.trade(c, "alice", trade, m2, "yes", "buy", "3.25")
	h.trade(c, "bob", bob, m0, "no", "buy", "12")
	h.trade(c, "alice", trade, m0, "yes", "sell", "2")
	h.trade(c, "alice", rotated, m0, "no", "buy", "1")
	h.trade(c, "bob", bob2, m1, "yes", "buy", "4")
	h.split(c, "bob", bob, m1, "split", "20")
	h.split(c, "bob", bob, m1, "merge", "5.5")
	h.trade(c, "bob", bob, m0, "no", "sell", "3")
	h.trade(c, "carol", carolKey, m2, "yes", "buy", "6")
	h.split(c, "carol", carolKey, m2, "split", "3")
	h.trade(c, "carol", carolKey, m1, "no", "buy", "2.5")
	var st settleJSON
	c.must(http.MethodPost, "/api/admin/settle", h.admin, map[string]any{"market_id": m2.ID, "outcome": "yes"}, http.StatusOK, &st)
	h.settled[m2.ID.String()] = st
	h.trade(c, "bob", bob2, m0, "yes", "buy", "1.125")

	// Referral, notifications: carol applies alice's code and reads the
	// notifications it and the settlement brought her; alice reads none.
	var code struct {
		Code string `json:"code"`
	}
	c.must(http.MethodGet, "/api/referral/code", alice, nil, http.StatusOK, &code)
	c.must(http.MethodPost, "/api/referral/apply", carolKey, map[string]any{"code": code.Code}, http.StatusOK, nil)
	var updated struct {
		Updated int `json:"updated"`
	}
	c.must(http.MethodPatch, "/api/notifications", carolKey, map[string]any{"all": true}, http.StatusOK, &updated)
	if updated.Updated != 2 {
		t.Fatalf("carol marked %d notifications read, want 2 (settlement, referral)", updated.Updated)
	}
	h.trade(c, "carol", carolKey, m0, "no", "buy", "2")

	// Requests refused after authentication count too.
	c.mustError(http.MethodGet, "/api/admin/stats", carolKey, nil, http.StatusForbidden, "Insufficient scope")
	c.mustError(http.MethodPost, "/api/keys", trade, map[string]any{"name": "x", "scopes": []string{"read"}},
		http.StatusForbidden, "Session required")
	c.keys(trade)
	c.me(trade)
	h.lastKeyUse = time.Now()
	return h
}

// observe reads everything the scenario's accounts can see, with sessions
// only (they count nothing), as JSON trees. The log and snapshot positions
// of the stats are left out: a restart moves them.
func observe(t *testing.T, c *client, h *history) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, a := range h.accounts {
		for _, path := range []string{"/api/agents/me", "/api/points?limit=1000", "/api/keys", "/api/portfolio",
			"/api/notifications?limit=1000", "/api/vig", "/api/referral/code", "/api/referral/stats"} {
			out[a.name+" "+path] = c.tree(path, a.session)
		}
	}
	out["markets"] = c.tree("/api/markets?status=all&limit=500", cred{})
	// Read once per process, after the scenario's last trade: the first
	// request builds the cached ranking, so it cannot be a second behind.
	out["leaderboard"] = c.tree("/api/leaderboard?limit=500", cred{})
	stats, ok := c.tree("/api/admin/stats", h.admin).(map[string]any)
	if !ok {
		t.Fatalf("stats: not a JSON object")
	}
	delete(stats, "wal")
	delete(stats, "snapshot")
	out["stats"] = stats
	return out
}

// compareStates reports every answer that differs after the restart.
func compareStates(t *testing.T, before, after map[string]any) {
	t.Helper()
	names := make([]string, 0, len(before))
	for name := range before {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !reflect.DeepEqual(before[name], after[name]) {
			t.Errorf("%s after the restart:\n got %s\nwant %s", name, jsonText(after[name]), jsonText(before[name]))
		}
	}
}

// verifyAnswers checks the state against every answer the scenario got:
// each trade, split and merge is in its account's ledger with the amount
// and balance it was answered with; positions, prices and settlements are
// what those answers imply; key statuses and counts are exact.
func verifyAnswers(t *testing.T, c *client, h *history, uses *keyUses) {
	t.Helper()
	type held struct{ market, side string }
	for _, a := range h.accounts {
		pts := c.points(a.session)
		checkLedger(t, a.name, pts)
		byRef := ledgerByRef(pts)
		want := map[held]money.Amount{}
		nTrades := 0
		for _, tr := range h.trades {
			if tr.who != a.name {
				continue
			}
			nTrades++
			amount := -tr.Cost
			if tr.Type == "sell" {
				amount = tr.Cost
			}
			e, ok := byRef["trade_"+tr.Type+"/"+tr.TradeID.String()]
			if !ok || e.Amount != amount || e.BalanceAfter != tr.BalanceAfter {
				t.Errorf("%s: trade %+v: ledger entry %+v (found %v), want amount %s, balance_after %s",
					a.name, tr.Trade, e, ok, amount, tr.BalanceAfter)
			}
			if tr.Type == "sell" {
				want[held{tr.MarketID.String(), tr.Side}] -= tr.Shares
			} else {
				want[held{tr.MarketID.String(), tr.Side}] += tr.Shares
			}
		}
		var splits []ackedSplit
		for _, s := range h.splits {
			if s.who == a.name {
				splits = append(splits, s)
				sign := money.Amount(1)
				if s.Type == "merge" {
					sign = -1
				}
				want[held{s.MarketID.String(), "yes"}] += sign * s.Amount
				want[held{s.MarketID.String(), "no"}] += sign * s.Amount
			}
		}
		var gotSplits []wire.LedgerItem // oldest first
		gotTrades := 0
		for i := len(pts.Ledger) - 1; i >= 0; i-- {
			switch e := pts.Ledger[i]; e.TxType {
			case "split", "merge":
				gotSplits = append(gotSplits, e)
			case "trade_buy", "trade_sell":
				gotTrades++
			}
		}
		if gotTrades != nTrades || len(gotSplits) != len(splits) {
			t.Errorf("%s: %d trades and %d splits/merges in the ledger, want %d and %d", a.name, gotTrades, len(gotSplits), nTrades, len(splits))
		} else {
			for i, s := range splits {
				e := gotSplits[i]
				amount := -s.Cost
				if s.Type == "merge" {
					amount = s.Cost
				}
				if e.TxType != s.Type || e.Amount != amount || e.BalanceAfter != s.BalanceAfter {
					t.Errorf("%s: %s %d: ledger entry %+v, want amount %s, balance_after %s", a.name, s.Type, i, e, amount, s.BalanceAfter)
				}
			}
		}
		me := c.me(a.session)
		open := 0
		for k, shares := range want {
			if _, settled := h.settled[k.market]; settled {
				continue // paid out: no position left
			}
			if got := heldShares(&me, k.market, k.side); got != shares {
				t.Errorf("%s: %s shares of %s: %s, want %s", a.name, k.side, k.market, got, shares)
			}
			if shares != 0 {
				open++
			}
		}
		if len(me.Positions) != open {
			t.Errorf("%s: positions %+v, want %d", a.name, me.Positions, open)
		}
	}

	for _, m := range h.markets {
		got := c.market(m.ID.String())
		if st, ok := h.settled[m.ID.String()]; ok {
			// The scenario settles one market: every payout is its.
			var paid money.Amount
			for _, a := range h.accounts {
				for _, e := range c.points(a.session).Ledger {
					if e.TxType == "settlement_payout" {
						paid += e.Amount
					}
				}
			}
			if got.Status != "resolved" || got.Outcome == nil || *got.Outcome != st.Outcome || paid != st.TotalPaid {
				t.Errorf("settled market %s: status %s, outcome %v, payouts %s; want resolved, %s, %s",
					m.ID, got.Status, got.Outcome, paid, st.Outcome, st.TotalPaid)
			}
			continue
		}
		var last *ackedTrade
		for i := range h.trades {
			if h.trades[i].MarketID == m.ID {
				last = &h.trades[i]
			}
		}
		if got.Status != "active" || last == nil || got.Prices.Yes != last.PriceYesAfter || got.Prices.No != last.PriceNoAfter {
			t.Errorf("market %s: status %s, prices %+v; want active, the prices after its last trade %+v", m.ID, got.Status, got.Prices, last)
		}
	}

	keys := c.keys(h.account("alice").session)
	for id, k := range c.keys(h.account("carol").session) {
		keys[id] = k
	}
	for id, status := range h.keyStatus {
		if k, ok := keys[id]; !ok || k.Status != status {
			t.Errorf("key %s: %+v (found %v), want status %s", id, k, ok, status)
		}
	}
	for secret, id := range h.liveKeys {
		if got, want := keys[id].TotalRequests, uses.get(secret); got != want {
			t.Errorf("key %s (%s): total_requests %d, want %d", id, keys[id].Name, got, want)
		}
	}
}

// checkCredentials checks that live keys and sessions work and dead ones
// get 401. It uses the live keys, so it runs last.
func checkCredentials(t *testing.T, c *client, h *history) {
	t.Helper()
	for secret, id := range h.deadKeys {
		r := c.do(http.MethodGet, "/api/agents/me", keyCred(secret), nil)
		if r.status != http.StatusUnauthorized || !strings.Contains(string(r.body), "Authentication required") {
			t.Errorf("revoked key %s: %d %s, want 401 Authentication required", id, r.status, r.body)
		}
	}
	for secret, id := range h.liveKeys {
		if me := c.me(keyCred(secret)); me.APIKey == nil || me.APIKey.ID.String() != id {
			t.Errorf("live key %s: profile %+v", id, me.APIKey)
		}
	}
	for _, s := range h.deadSessions {
		c.mustError(http.MethodGet, "/api/agents/me", s, nil, http.StatusUnauthorized, "Authentication required")
	}
	for _, s := range h.liveSessions {
		c.me(s)
	}
}

// TestRestartAfterKill crashes the server (SIGKILL) after a series of
// acknowledged changes and checks that a restart on the same data gives
// back every one of them exactly.
func TestRestartAfterKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	uses := newKeyUses()
	first := startProc(t, "first run", procOptions{dataDir: dir})
	c := first.client(uses)
	h := runScenario(t, c)
	// Let the keys' usage reach the log, so that total_requests must come
	// back exact rather than up to a second behind (docs/API.md,
	// "Authentication").
	time.Sleep(time.Until(h.lastKeyUse.Add(usageFlushWait)))
	before := observe(t, c, h)
	verifyAnswers(t, c, h, uses)
	first.kill()

	second := startProc(t, "after SIGKILL", procOptions{dataDir: dir})
	c = second.client(uses)
	compareStates(t, before, observe(t, c, h))
	verifyAnswers(t, c, h, uses)
	checkCredentials(t, c, h)
}

// TestRestartAfterTerm stops the server cleanly (SIGTERM): it exits 0
// with a final snapshot, and a restart gives back the same state,
// total_requests included, with no wait.
func TestRestartAfterTerm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	uses := newKeyUses()
	first := startProc(t, "first run", procOptions{dataDir: dir})
	c := first.client(uses)
	h := runScenario(t, c)
	before := observe(t, c, h)
	verifyAnswers(t, c, h, uses)
	if code := first.terminate(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
	if !first.stderr.contains("final snapshot") {
		t.Errorf("no final snapshot logged")
	}
	snaps, err := filepath.Glob(filepath.Join(dir, "snapshots", "*.snap"))
	if err != nil || len(snaps) == 0 {
		entries, _ := os.ReadDir(filepath.Join(dir, "snapshots"))
		t.Fatalf("no snapshot file under %s/snapshots (err %v): %v", dir, err, entries)
	}

	second := startProc(t, "after SIGTERM", procOptions{dataDir: dir})
	if !second.stderr.contains("recovered snapshot=true replayed_records=0 ") {
		t.Errorf("the restart did not start from a final snapshot holding everything")
	}
	c = second.client(uses)
	compareStates(t, before, observe(t, c, h))
	verifyAnswers(t, c, h, uses)
	checkCredentials(t, c, h)
	if code := second.terminate(); code != 0 {
		t.Fatalf("second run: exit code %d after SIGTERM, want 0", code)
	}
}

// tradeOp is a trade request and the answer it got.
type tradeOp struct {
	body map[string]any
	res  wire.Trade
}

// trader is one account trading in a goroutine of TestRestartWhileTrading.
type trader struct {
	name    string
	session cred
	key     string
	keyID   string
	acked   []tradeOp
	// lost is the request whose answer never arrived, if any: it may or
	// may not have been applied.
	lost map[string]any
	// refused is whether a clean stop answered the last request 503
	// shutting_down (docs/API.md, "Errors"): answered, and not applied.
	refused bool
	// sent counts the requests sent with the key, answered or not.
	sent uint64
	err  error // an answer other than 200
}

// traderOp is the jth request of a trader: buy 1.5 yes on one market, buy
// 1.5 no on the other, sell 1 yes on the first, and again. The yes shares
// held before each sell are 1.5 + 0.5 times the cycles done: always enough.
func traderOp(j int, first, second string) map[string]any {
	switch j % 3 {
	case 0:
		return tradeBody(first, "yes", "buy", "1.5")
	case 1:
		return tradeBody(second, "no", "buy", "1.5")
	default:
		return tradeBody(first, "yes", "sell", "1")
	}
}

// run trades until stop is closed or a request fails; each answered trade
// is announced on acks unless it is full. Runs on its own goroutine: it
// only records what happened, the test judges it afterwards.
func (tr *trader) run(c *client, first, second string, acks chan<- struct{}, stop <-chan struct{}) {
	for j := 0; ; j++ {
		select {
		case <-stop:
			return
		default:
		}
		body := traderOp(j, first, second)
		tr.sent++
		r, err := c.try(http.MethodPost, "/api/markets/trade", keyCred(tr.key), body)
		if err != nil {
			tr.lost = body
			return
		}
		if r.status == http.StatusServiceUnavailable && errorCode(r.body) == "shutting_down" {
			tr.refused = true
			return
		}
		if r.status != http.StatusOK {
			tr.err = fmt.Errorf("trade %s: status %d: %s", jsonText(body), r.status, r.body)
			return
		}
		var res wire.Trade
		if err := json.Unmarshal(r.body, &res); err != nil {
			tr.err = fmt.Errorf("trade %s: decode %s: %w", jsonText(body), r.body, err)
			return
		}
		tr.acked = append(tr.acked, tradeOp{body: body, res: res})
		select {
		case acks <- struct{}{}:
		default: // the test has seen enough
		}
	}
}

// signedAmount is a trade's ledger amount: negative for a buy.
func signedAmount(typ string, cost money.Amount) money.Amount {
	if typ == "sell" {
		return cost
	}
	return -cost
}

// TestRestartWhileTrading stops the server while several clients trade,
// by a crash (SIGKILL) or cleanly (SIGTERM), and checks that every trade
// answered with 200 survives, that a trade whose answer was lost is either
// wholly there or wholly absent (and absent after a clean stop), that one
// a clean stop refused (503 shutting_down) is absent, and that balances,
// positions, markets and the stats all agree with the ledgers.
func TestRestartWhileTrading(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
	}{{"SIGKILL", syscall.SIGKILL}, {"SIGTERM", syscall.SIGTERM}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testRestartWhileTrading(t, tc.name, tc.sig)
		})
	}
}

func testRestartWhileTrading(t *testing.T, sigName string, sig syscall.Signal) {
	const (
		traders = 4
		// killAfterAcks trades are answered before the signal.
		killAfterAcks = 120
	)
	bonus := money.Units(1000)
	dir := t.TempDir()
	// Unlimited keys: the standard tier's 60 a minute would stop the
	// traders first.
	opts := procOptions{dataDir: dir, args: []string{"-default-tier", "unlimited"}}
	first := startProc(t, "first run", opts)
	c := first.client(nil)
	admin := sessionCred(c.login("admin", testAdminPassword))
	markets := []wire.Market{c.createMarket(admin, "crash A", nil),
		c.createMarket(admin, "crash B", map[string]any{"liquidity": 300})}
	trs := make([]*trader, traders)
	for i := range trs {
		name := fmt.Sprintf("trader%d", i)
		tok, _ := c.register(name)
		k := c.createKey(sessionCred(tok), "bot", []string{"read", "trade"}, nil)
		trs[i] = &trader{name: name, session: sessionCred(tok), key: k.Key, keyID: k.ID.String()}
	}

	acks := make(chan struct{}, killAfterAcks)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, tr := range trs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr.run(c, markets[i%2].ID.String(), markets[(i+1)%2].ID.String(), acks, stop)
		}()
	}
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
wait:
	for n := 0; n < killAfterAcks; n++ {
		select {
		case <-acks:
		case <-timeout.C:
			t.Errorf("only %d trades answered in 20s", n)
			break wait
		}
	}
	code := first.stop(sig)
	close(stop)
	wg.Wait()
	if sig == syscall.SIGTERM && code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	answered, lost, refused := 0, 0, 0
	for _, tr := range trs {
		if tr.err != nil {
			t.Fatalf("%s: %v", tr.name, tr.err)
		}
		answered += len(tr.acked)
		if tr.lost != nil {
			lost++
		}
		if tr.refused {
			refused++
		}
	}
	t.Logf("%s after %d trades answered; %d requests without an answer, %d refused as the server stopped", sigName, answered, lost, refused)

	second := startProc(t, "after "+sigName, opts)
	c = second.client(nil)
	type held struct{ market, side string }
	total := map[held]money.Amount{}    // shares held by all traders
	volume := map[string]money.Amount{} // by market
	var trades uint64
	var allVolume money.Amount
	for _, tr := range trs {
		pts := c.points(tr.session)
		checkLedger(t, tr.name, pts)
		byRef := ledgerByRef(pts)
		shares := map[held]money.Amount{}
		balance := money.Amount(0)
		apply := func(body map[string]any, cost money.Amount) {
			typ := body["type"].(string)
			h := held{body["market_id"].(string), body["side"].(string)}
			n, err := money.Parse(string(body["shares"].(json.Number)))
			if err != nil {
				t.Fatalf("BUG: shares %v: %v", body["shares"], err)
			}
			if typ == "sell" {
				n = -n
			}
			shares[h] += n
			balance += signedAmount(typ, cost)
			volume[h.market] += cost
			allVolume += cost
			trades++
		}
		acked := map[string]bool{}
		for _, op := range tr.acked {
			a := op.res
			amount := signedAmount(a.Type, a.Cost)
			if e, ok := byRef["trade_"+a.Type+"/"+a.TradeID.String()]; !ok || e.Amount != amount || e.BalanceAfter != a.BalanceAfter {
				t.Errorf("%s: acknowledged trade %+v: ledger entry %+v (found %v)", tr.name, a, e, ok)
			}
			acked[a.TradeID.String()] = true
			apply(op.body, a.Cost)
		}
		// Whatever else is there: the signup bonus, oldest, and at most the
		// trade whose answer was lost, newest.
		for i, e := range pts.Ledger {
			switch {
			case e.TxType == "signup_bonus" && i == len(pts.Ledger)-1 && e.Amount == bonus:
				balance += e.Amount
			case acked[e.RefID.String()]:
			case tr.lost != nil && i == 0 && e.TxType == "trade_"+tr.lost["type"].(string):
				t.Logf("%s: the trade whose answer was lost is there: %+v", tr.name, e)
				if sig != syscall.SIGKILL {
					// A clean stop answers every request it served.
					t.Errorf("%s: a trade applied but never answered during a clean stop: %+v", tr.name, e)
				}
				cost := e.Amount
				if cost < 0 {
					cost = -cost
				}
				apply(tr.lost, cost)
			default:
				t.Errorf("%s: unexpected ledger entry %d: %+v (lost request: %v)", tr.name, i, e, tr.lost)
			}
		}
		if pts.Balance != balance {
			t.Errorf("%s: balance %s, want %s: the bonus and the trades found", tr.name, pts.Balance, balance)
		}
		me := c.me(tr.session)
		open := 0
		for h, n := range shares {
			total[h] += n
			if got := heldShares(&me, h.market, h.side); got != n {
				t.Errorf("%s: %s shares of %s: %s, want %s", tr.name, h.side, h.market, got, n)
			}
			if n != 0 {
				open++
			}
		}
		if len(me.Positions) != open || me.Agent.Balance != pts.Balance {
			t.Errorf("%s: profile with %d positions and balance %s, want %d and %s", tr.name,
				len(me.Positions), me.Agent.Balance, open, pts.Balance)
		}
		// total_requests never leads; it may lag after a crash, not after
		// a clean stop, which logs the last usage.
		least := uint64(0)
		if sig != syscall.SIGKILL {
			least = uint64(len(tr.acked))
		}
		keys := c.keys(tr.session)
		if k, ok := keys[tr.keyID]; len(keys) != 1 || !ok || k.TotalRequests > tr.sent || k.TotalRequests < least || k.Status != "active" {
			t.Errorf("%s: keys %+v; want key %s active, with %d to %d requests", tr.name, keys, tr.keyID, least, tr.sent)
		}
	}

	var openInterest money.Amount
	for _, m := range markets {
		got := c.market(m.ID.String())
		yes, no := total[held{m.ID.String(), "yes"}], total[held{m.ID.String(), "no"}]
		if got.Liquidity.QYes-m.Liquidity.QYes != yes || got.Liquidity.QNo-m.Liquidity.QNo != no || got.Volume != volume[m.ID.String()] {
			t.Errorf("market %s: q %s/%s from %s/%s and volume %s; the traders hold %s yes, %s no, traded %s",
				m.ID, got.Liquidity.QYes, got.Liquidity.QNo, m.Liquidity.QYes, m.Liquidity.QNo, got.Volume, yes, no, volume[m.ID.String()])
		}
		openInterest += max(yes, no)
	}
	// The admin's session survived the crash too.
	st := c.stats(admin)
	if st.Accounts != traders+1 || st.Markets.Active != len(markets) || st.Trades.KP != trades ||
		st.Volume.KP != allVolume || st.OpenInterest.KP != openInterest || st.ActiveKeys != traders {
		t.Errorf("stats %+v: want %d accounts, %d active markets, %d trades of volume %s, open interest %s, %d keys",
			st, traders+1, len(markets), trades, allVolume, openInterest, traders)
	}
	for _, tr := range trs {
		c.me(keyCred(tr.key))
	}
}
