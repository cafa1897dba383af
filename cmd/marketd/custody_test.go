package main

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"marketd/core/money"
)

// tokenJSON is a deposit or withdrawal answer.
type tokenJSON struct {
	Deposit    map[string]any `json:"deposit"`
	Withdrawal map[string]any `json:"withdrawal"`
	USDC       money.Amount   `json:"usdc_balance"`
}

// TestCustodyRestartAfterKill links wallets, deposits, trades and splits
// in the USDC mode, withdraws and changes settings, persona and terms;
// crashes the server (SIGKILL); and checks that the restart gives all of
// it back, and that the deposit's transaction still credits nothing again.
func TestCustodyRestartAfterKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := startProc(t, "first run", procOptions{dataDir: dir})
	c := first.client(nil)
	admin := sessionCred(c.login("admin", testAdminPassword))
	m := c.createMarket(admin, "usdc market", nil)
	aliceTok, _ := c.register("alice")
	bobTok, _ := c.register("bob")
	alice, bob := sessionCred(aliceTok), sessionCred(bobTok)
	const walletA, walletB = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"
	tx := "0x" + strings.Repeat("ab", 32)

	c.must(http.MethodPost, "/api/wallet", alice, map[string]any{"address": strings.ToLower(walletA)}, http.StatusOK, nil)
	c.must(http.MethodPost, "/api/wallet", bob, map[string]any{"address": walletB}, http.StatusOK, nil)
	var dep tokenJSON
	c.must(http.MethodPost, "/api/token/deposit", alice, map[string]any{"amount": 250, "tx_hash": tx}, http.StatusOK, &dep)
	// The manual custody (the default): the admin confirms it.
	c.must(http.MethodPost, "/api/admin/deposits/"+dep.Deposit["id"].(string)+"/confirm", admin, map[string]any{"amount": 250},
		http.StatusOK, &dep)
	c.must(http.MethodPost, "/api/profile/trading-mode", alice, map[string]any{"mode": "usdc"}, http.StatusOK, nil)
	tr := c.trade(alice, m.ID.String(), "yes", "buy", "12")
	if tr.BalanceAfter != money.Units(250)-tr.Cost {
		t.Fatalf("USDC trade %+v: balance_after is not the USDC balance less the cost", tr)
	}
	sp := c.splitMerge(alice, m.ID.String(), "split", "3")
	var wd tokenJSON
	c.must(http.MethodPost, "/api/token/withdraw", alice, map[string]any{"amount": 40}, http.StatusOK, &wd)
	c.must(http.MethodPatch, "/api/settings", alice, map[string]any{"theme": "dark", "notifications": false}, http.StatusOK, nil)
	c.must(http.MethodPost, "/api/profile/persona", alice, map[string]any{"persona": "cautious"}, http.StatusOK, nil)
	c.must(http.MethodPost, "/api/profile/accept-tos", alice, map[string]any{"version": "2026-11"}, http.StatusOK, nil)
	c.must(http.MethodPost, "/api/profile/trading-mode", bob, map[string]any{"mode": "usdc"}, http.StatusOK, nil)

	observeCustody := func(c *client) map[string]any {
		out := map[string]any{}
		for name, cr := range map[string]cred{"alice": alice, "bob": bob} {
			for _, path := range []string{"/api/agents/me", "/api/settings", "/api/token/balance?limit=1000", "/api/portfolio", "/api/points?limit=1000"} {
				out[name+" "+path] = c.tree(path, cr)
			}
		}
		out["market"] = c.tree("/api/markets/"+m.ID.String(), cred{})
		return out
	}
	before := observeCustody(c)
	first.kill()

	second := startProc(t, "after SIGKILL", procOptions{dataDir: dir})
	c = second.client(nil)
	compareStates(t, before, observeCustody(c))

	// The deposit's transaction credits nothing again, for anyone; the
	// wallet stays alice's.
	var again tokenJSON
	c.must(http.MethodPost, "/api/token/deposit", alice, map[string]any{"amount": 250, "tx_hash": tx}, http.StatusOK, &again)
	if again.Deposit["id"] != dep.Deposit["id"] || again.USDC != money.Units(250)-tr.Cost-sp.Cost-money.Units(40) {
		t.Fatalf("repeated deposit after restart %+v, want the first %+v and the balance unchanged", again, dep)
	}
	c.mustError(http.MethodPost, "/api/token/deposit", bob, map[string]any{"amount": 1, "tx_hash": tx}, http.StatusBadRequest,
		"tx_hash already credited to another account")
	c.mustError(http.MethodPost, "/api/wallet", bob, map[string]any{"address": walletA}, http.StatusBadRequest, "Wallet already linked")
	c.mustError(http.MethodDelete, "/api/wallet", alice, nil, http.StatusBadRequest, "USDC balance or positions remain")
	if after := c.tree("/api/token/balance?limit=1000", alice); !reflect.DeepEqual(after, before["alice /api/token/balance?limit=1000"]) {
		t.Fatalf("token balance changed by the refused requests: %s", jsonText(after))
	}
}
