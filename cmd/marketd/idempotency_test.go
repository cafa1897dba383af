package main

import (
	"bytes"
	"fmt"
	"net/http"
	"syscall"
	"testing"
)

// idemRetry sends body to path with an Idempotency-Key.
func (c *client) idemRetry(path string, cr cred, key string, body []byte) reply {
	c.t.Helper()
	return c.idemSend(http.MethodPost, path, cr, key, body)
}

// idemSend sends body to path by method with an Idempotency-Key.
func (c *client) idemSend(method, path string, cr cred, key string, body []byte) reply {
	c.t.Helper()
	r, err := c.tryRaw(method, path, cr, body, map[string]string{"Idempotency-Key": key})
	if err != nil {
		c.t.Fatalf("%s %s with key %s: %v", method, path, key, err)
	}
	return r
}

// TestIdempotentRetryAfterKill: a trade, a split, a batch of trades
// across two markets, a settings PATCH, a persona (endpoints of the
// generic path) and the admin's settlement of a market are answered, the server is killed with SIGKILL
// before the client's retries, each retry after restart gets the same
// answer byte for byte (the same trade_id) marked replayed, and the balance
// is charged once; the same after a clean stop, whose final
// snapshot then holds the key, and after one more kill.
func TestIdempotentRetryAfterKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := startProc(t, "first run", procOptions{dataDir: dir})
	c := first.client(nil)
	admin := sessionCred(c.login("admin", testAdminPassword))
	m := c.createMarket(admin, "idempotent", nil)
	tok, ag := c.register("retrier")
	bot := sessionCred(tok)
	trade := []byte(fmt.Sprintf(`{"market_id":%q,"side":"yes","type":"buy","shares":4.5}`, m.ID))
	split := []byte(fmt.Sprintf(`{"market_id":%q,"type":"split","amount":2}`, m.ID))
	m2 := c.createMarket(admin, "idempotent batch", nil)
	batch := []byte(fmt.Sprintf(`{"trades":[{"market_id":%q,"side":"no","type":"buy","shares":1},`+
		`{"market_id":%q,"side":"yes","type":"buy","shares":2},{"market_id":%q,"side":"yes","type":"sell","shares":1}]}`, m.ID, m2.ID, m2.ID))

	answer := c.idemRetry("/api/markets/trade", bot, "retry-1", trade)
	splitAnswer := c.idemRetry("/api/markets/split-merge", bot, "retry-2", split)
	batchAnswer := c.idemRetry("/api/markets/trades", bot, "retry-3", batch)
	settings := []byte(`{"theme":"dark","notifications":false}`)
	settingsAnswer := c.idemSend(http.MethodPatch, "/api/settings", bot, "retry-4", settings)
	persona := []byte(`{"persona":"retries after a crash"}`)
	personaAnswer := c.idemRetry("/api/profile/persona", bot, "retry-5", persona)
	if settingsAnswer.status != http.StatusOK || personaAnswer.status != http.StatusOK {
		t.Fatalf("first answers: %d %s; %d %s", settingsAnswer.status, settingsAnswer.body, personaAnswer.status, personaAnswer.body)
	}
	if answer.status != http.StatusOK || splitAnswer.status != http.StatusOK || batchAnswer.status != http.StatusOK ||
		bytes.Contains(batchAnswer.body, []byte(`"code"`)) {
		t.Fatalf("first answers: %d %s; %d %s; %d %s", answer.status, answer.body, splitAnswer.status, splitAnswer.body,
			batchAnswer.status, batchAnswer.body)
	}
	// More trades than the profile's 20: GET /api/trades must keep them all.
	for range 22 {
		c.trade(bot, m2.ID.String(), "no", "buy", "0.1")
	}
	settle := []byte(fmt.Sprintf(`{"market_id":%q,"outcome":"no"}`, m2.ID))
	settleAnswer := c.idemRetry("/api/admin/settle", admin, "retry-6", settle)
	if settleAnswer.status != http.StatusOK || !bytes.Contains(settleAnswer.body, []byte(`"positions_paid":1,`)) {
		t.Fatalf("first settlement: %d %s; want 200 with the bot's one position paid", settleAnswer.status, settleAnswer.body)
	}
	fills := c.must(http.MethodGet, "/api/trades?limit=500", bot, nil, http.StatusOK, nil).body
	lookup := c.must(http.MethodGet, "/api/idempotency?key=retry-3", bot, nil, http.StatusOK, nil).body
	balance := c.me(bot).Agent.Balance
	if balance >= ag.Balance {
		t.Fatalf("balance %s after a buy, from %s", balance, ag.Balance)
	}

	check := func(c *client, when string) {
		t.Helper()
		for _, tc := range []struct {
			method, path, key string
			cr                cred
			body              []byte
			want              reply
		}{
			{http.MethodPost, "/api/markets/trade", "retry-1", bot, trade, answer},
			{http.MethodPost, "/api/markets/split-merge", "retry-2", bot, split, splitAnswer},
			{http.MethodPost, "/api/markets/trades", "retry-3", bot, batch, batchAnswer},
			{http.MethodPatch, "/api/settings", "retry-4", bot, settings, settingsAnswer},
			{http.MethodPost, "/api/profile/persona", "retry-5", bot, persona, personaAnswer},
			{http.MethodPost, "/api/admin/settle", "retry-6", admin, settle, settleAnswer},
		} {
			r := c.idemSend(tc.method, tc.path, tc.cr, tc.key, tc.body)
			if r.status != http.StatusOK || !bytes.Equal(r.body, tc.want.body) || r.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("%s: retry of %s: %d %s replayed %q; want 200 %s replayed", when, tc.key, r.status, r.body,
					r.header.Get("Idempotent-Replayed"), tc.want.body)
			}
		}
		if got := c.must(http.MethodGet, "/api/trades?limit=500", bot, nil, http.StatusOK, nil).body; !bytes.Equal(got, fills) {
			t.Fatalf("%s: GET /api/trades\n%s\nwant\n%s", when, got, fills)
		}
		if got := c.must(http.MethodGet, "/api/idempotency?key=retry-3", bot, nil, http.StatusOK, nil).body; !bytes.Equal(got, lookup) {
			t.Fatalf("%s: GET /api/idempotency\n%s\nwant\n%s", when, got, lookup)
		}
		if got := c.me(bot).Agent.Balance; got != balance {
			t.Fatalf("%s: balance %s, want %s: a retry was charged", when, got, balance)
		}
		r := c.idemRetry("/api/markets/trade", bot, "retry-1", split)
		if r.status != http.StatusUnprocessableEntity {
			t.Fatalf("%s: key reused with another body: %d %s", when, r.status, r.body)
		}
		if r := c.idemSend(http.MethodPatch, "/api/settings", bot, "retry-4", []byte(`{"theme":"light"}`)); r.status != http.StatusUnprocessableEntity {
			t.Fatalf("%s: settings key reused with another body: %d %s", when, r.status, r.body)
		}
		// The settings the first PATCH set, unchanged by the replays.
		if got := c.must(http.MethodGet, "/api/settings", bot, nil, http.StatusOK, nil).body; !bytes.Equal(got, settingsAnswer.body) {
			t.Fatalf("%s: GET /api/settings %s, want %s", when, got, settingsAnswer.body)
		}
	}

	first.kill()
	second := startProc(t, "after SIGKILL", procOptions{dataDir: dir})
	check(second.client(nil), "after SIGKILL")
	if code := second.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM: exit %d\n%s", code, second.output())
	}
	third := startProc(t, "after SIGTERM (snapshot)", procOptions{dataDir: dir})
	check(third.client(nil), "from the snapshot")
	third.kill()
	fourth := startProc(t, "after a second SIGKILL", procOptions{dataDir: dir})
	check(fourth.client(nil), "from the snapshot and the log")
}
