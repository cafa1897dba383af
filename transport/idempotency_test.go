package transport

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/manualclock"
	"marketd/transport/wire"
)

// withKey returns the headers of a request with an Idempotency-Key.
func withKey(key string) map[string]string { return map[string]string{HeaderIdempotencyKey: key} }

// kpBalance returns the account's KP balance.
func (ts *testServer) kpBalance(id uuid.UUID) money.Amount {
	ts.t.Helper()
	v, ok := ts.eng.Account(id)
	if !ok {
		ts.t.Fatalf("account %s not found", id)
	}
	return v.Balances[money.KP]
}

// TestIdempotentTradeHTTP: the same trade sent twice with one key, in
// sequence and concurrently, trades once and every answer is the first,
// byte for byte, the repeats marked Idempotent-Replayed; a key reused with
// another body is 422; a request refused before any change stores nothing;
// a malformed key is 400, and so is a key on the endpoints whose answers
// hold a secret.
func TestIdempotentTradeHTTP(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess, id := ts.registerAccount("bot")
	mkt := ts.createMarket(ts.admin(), nil).ID.String()
	me := auth{session: sess}
	body := `{"market_id":"` + mkt + `","side":"yes","type":"buy","shares":3}`
	before := ts.kpBalance(id)

	first := ts.doHeaders("POST", "/api/markets/trade", me, body, withKey("order-1"))
	ts.expect(first, http.StatusOK, "")
	if first.header.Get(HeaderReplayed) != "" {
		t.Errorf("first answer marked %s", HeaderReplayed)
	}
	var tr wire.Trade
	ts.decode(first, http.StatusOK, &tr)
	again := ts.doHeaders("POST", "/api/markets/trade", me, body, withKey("order-1"))
	if again.status != http.StatusOK || !bytes.Equal(again.body, first.body) || again.header.Get(HeaderReplayed) != "true" {
		t.Fatalf("repeat: %d %s (replayed %q); want 200, %s, replayed true", again.status, again.body, again.header.Get(HeaderReplayed), first.body)
	}
	if got := ts.kpBalance(id); got != before-tr.Cost {
		t.Fatalf("balance %s after a trade of %s and its repeat, from %s", got, tr.Cost, before)
	}

	// Concurrent: eight at once with a new key, one trade.
	afterFirst := ts.kpBalance(id)
	var wg sync.WaitGroup
	answers := make([]response, 8)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = ts.doHeaders("POST", "/api/markets/trade", me, body, withKey("order-2"))
		}()
	}
	wg.Wait()
	// Concurrent requests can leave a connection the client dialled and
	// never used; the server's Shutdown would wait for it until its read
	// timeout (as the concurrently helper avoids with a client of its own).
	ts.client.CloseIdleConnections()
	replayed := 0
	for i, r := range answers {
		if r.status != http.StatusOK || !bytes.Equal(r.body, answers[0].body) {
			t.Fatalf("concurrent answer %d: %d %s; want 200, %s", i, r.status, r.body, answers[0].body)
		}
		if r.header.Get(HeaderReplayed) == "true" {
			replayed++
		}
	}
	var tr2 wire.Trade
	ts.decode(answers[0], http.StatusOK, &tr2)
	if replayed != len(answers)-1 || ts.kpBalance(id) != afterFirst-tr2.Cost {
		t.Fatalf("%d of %d answers replayed, balance %s from %s after a trade of %s; want one trade", replayed,
			len(answers), ts.kpBalance(id), afterFirst, tr2.Cost)
	}

	// The same key with another body.
	other := strings.Replace(body, `"shares":3`, `"shares":4`, 1)
	ts.expect(ts.doHeaders("POST", "/api/markets/trade", me, other, withKey("order-1")), http.StatusUnprocessableEntity,
		"Idempotency-Key reused with a different request")

	// A refused request stores nothing: the key is free for another.
	bad := strings.Replace(body, `"shares":3`, `"shares":-1`, 1)
	ts.expectField(ts.doHeaders("POST", "/api/markets/trade", me, bad, withKey("order-3")), "shares")
	ts.expect(ts.doHeaders("POST", "/api/markets/trade", me, body, withKey("order-3")), http.StatusOK, "")

	// Keys are per account: another account's order-1 is its own.
	sess2, _ := ts.registerAccount("bot2")
	r := ts.doHeaders("POST", "/api/markets/trade", auth{session: sess2}, body, withKey("order-1"))
	if r.status != http.StatusOK || r.header.Get(HeaderReplayed) != "" {
		t.Fatalf("another account's key: %d %s replayed %q", r.status, r.body, r.header.Get(HeaderReplayed))
	}

	for _, key := range []string{"", strings.Repeat("k", 256), "tab\there", "é"} {
		ts.expect(ts.doHeaders("POST", "/api/markets/trade", me, body, withKey(key)), http.StatusBadRequest,
			"Idempotency-Key must be 1 to 255 printable ASCII characters")
	}
	ts.expect(ts.doHeaders("POST", "/api/markets/trade", me, body, withKey(strings.Repeat("k", 255))), http.StatusOK, "")
	for _, rt := range []struct{ method, path, body string }{
		{"POST", "/api/auth/register", `{"name":"x1","password":"password-x1"}`},
		{"POST", "/api/auth/login", `{"name":"bot","password":"password-bot"}`},
		{"POST", "/api/keys", `{"name":"k"}`},
		{"POST", "/api/keys/" + uuid.NewString() + "/rotate", `{}`},
	} {
		ts.expect(ts.doHeaders(rt.method, rt.path, me, rt.body, withKey("k")), http.StatusBadRequest,
			"Idempotency-Key is not accepted on this endpoint")
	}
}

// TestIdempotencyRetention: a key is kept for the retention window and
// forgotten after it; an account at its cap of live keys gets 429 for a
// new one, and as keys expire the count of kept keys stays at the cap over
// a long run.
func TestIdempotencyRetention(t *testing.T) {
	const keys = 5
	clk := manualclock.New(testEpoch)
	ts := startTestServerEngine(t, Config{}, core.Config{Idempotency: core.IdempotencyLimits{Retention: time.Hour, Keys: keys}}, clk, nil)
	sess, id := ts.registerAccount("bot")
	mkt := ts.createMarket(ts.admin(), map[string]any{"closes_at": iso(testEpoch.Add(1000 * time.Hour))}).ID.String()
	me := auth{session: sess}
	body := func(shares int) string {
		return fmt.Sprintf(`{"market_id":%q,"side":"yes","type":"buy","shares":%d}`, mkt, shares)
	}
	ts.expect(ts.doHeaders("POST", "/api/markets/trade", me, body(1), withKey("k")), http.StatusOK, "")
	clk.Advance(59 * time.Minute)
	ts.expect(ts.doHeaders("POST", "/api/markets/trade", me, body(2), withKey("k")), http.StatusUnprocessableEntity, "")
	clk.Advance(time.Minute)
	// Expired: the key runs another request.
	r := ts.doHeaders("POST", "/api/markets/trade", me, body(2), withKey("k"))
	if r.status != http.StatusOK || r.header.Get(HeaderReplayed) != "" {
		t.Fatalf("expired key: %d %s", r.status, r.body)
	}
	clk.Advance(time.Hour)
	for round := range 20 {
		for i := range keys {
			key := fmt.Sprintf("r%d-%d", round, i)
			r := ts.doHeaders("POST", "/api/markets/trade", me, body(1), withKey(key))
			if r.status != http.StatusOK {
				t.Fatalf("round %d key %d: %d %s", round, i, r.status, r.body)
			}
			clk.Advance(time.Second)
		}
		ts.expect(ts.doHeaders("POST", "/api/markets/trade", me, body(1), withKey(fmt.Sprint("over", round))),
			http.StatusTooManyRequests, "Too many live Idempotency-Keys for this account")
		if n := ts.eng.IdempotencyKeys(id); n > keys {
			t.Fatalf("round %d: %d keys kept, cap %d", round, n, keys)
		}
		clk.Advance(time.Hour)
	}
}

// TestQuoteThenTradeHTTP: POST /api/markets/quote gives the exact cost of
// the trade of the same body; the trade sent with its market_seq as
// expect_seq costs exactly that; once the market has moved, expect_seq is
// refused with 409 market_moved and nothing changes. Quotes of splits and
// merges, and market_seq in the market object, too.
func TestQuoteThenTradeHTTP(t *testing.T) {
	ts := newTestServer(t, Config{})
	sess, _ := ts.registerAccount("bot")
	other := ts.register("other")
	me := auth{session: sess}
	mkt := ts.createMarket(ts.admin(), nil).ID.String()
	readKey := ts.newKey(sess, "read")
	for _, b := range []string{
		`{"market_id":%q,"side":"yes","type":"buy","shares":12.345678}`,
		`{"marketId":%q,"outcome":"no","side":"buy","amount":3}`,
		`{"market_id":%q,"side":"yes","type":"sell","shares":2.5}`,
	} {
		body := fmt.Sprintf(b, mkt)
		var q struct {
			Cost      money.Amount `json:"cost"`
			Vig       money.Amount `json:"vig"`
			MarketSeq uint64       `json:"market_seq"`
		}
		ts.decode(ts.do("POST", "/api/markets/quote", auth{key: readKey}, body), http.StatusOK, &q)
		if m := ts.market(mkt); m.MarketSeq != q.MarketSeq {
			t.Fatalf("market object market_seq %d, quote %d", m.MarketSeq, q.MarketSeq)
		}
		var tr wire.Trade
		ts.decode(ts.do("POST", "/api/markets/trade", me, strings.TrimSuffix(body, "}")+fmt.Sprintf(`,"expect_seq":%d}`, q.MarketSeq)), http.StatusOK, &tr)
		if tr.Cost != q.Cost || tr.Vig != q.Vig || tr.MarketSeq != q.MarketSeq+1 {
			t.Fatalf("%s: trade cost %s vig %s seq %d; quoted %s %s at %d", body, tr.Cost, tr.Vig, tr.MarketSeq, q.Cost, q.Vig, q.MarketSeq)
		}
	}
	var q struct {
		MarketSeq uint64 `json:"market_seq"`
	}
	ts.decode(ts.do("POST", "/api/markets/quote", me, fmt.Sprintf(`{"market_id":%q,"amount":2,"type":"split"}`, mkt)), http.StatusOK, &q)
	ts.trade(auth{session: other}, mkt, "no", "buy", "1")
	before := ts.observe(me, mkt)
	for _, b := range []string{
		`{"market_id":%q,"side":"yes","type":"buy","shares":1,"expect_seq":%d}`,
		`{"market_id":%q,"amount":2,"type":"split","expect_seq":%d}`,
	} {
		path := "/api/markets/trade"
		if strings.Contains(b, "split") {
			path = "/api/markets/split-merge"
		}
		ts.expect(ts.do("POST", path, me, fmt.Sprintf(b, mkt, q.MarketSeq)), http.StatusConflict, "Market moved since the quote (expect_seq)")
	}
	ts.unchanged(me, mkt, before)
	ts.expectField(ts.do("POST", "/api/markets/quote", me, fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1,"expect_seq":1}`, mkt)), "expect_seq")
	ts.expectField(ts.do("POST", "/api/markets/trade", me, fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1,"expect_seq":-1}`, mkt)), "expect_seq")
	ts.expect(ts.do("POST", "/api/markets/quote", me, fmt.Sprintf(`{"market_id":%q,"side":"yes","shares":1}`, uuid.NewString())), http.StatusNotFound, "Market not found")
}
