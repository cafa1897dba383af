//go:build legacygen

package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteLegacyDataDir writes legacyDir and legacyExpectFile. It is run
// once, in the tree of commit e00a1d2 with this file and legacy_test.go
// copied in:
//
//	go test -tags legacygen -run TestWriteLegacyDataDir ./cmd/marketd/
//
// and its output copied into this testdata directory.
func TestWriteLegacyDataDir(t *testing.T) {
	if err := os.RemoveAll(legacyDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(legacyDir), 0o755); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "legacy writer", procOptions{dataDir: legacyDir, args: legacyFlags})
	c := p.client(nil)
	admin := sessionCred(c.login("admin", testAdminPassword))
	cr := map[string]cred{}
	for _, name := range legacyAccounts {
		tok, _ := c.register(name)
		cr[name] = sessionCred(tok)
	}
	markets := map[string]string{
		"main":  c.createMarket(admin, "Main", nil).ID,
		"other": c.createMarket(admin, "Other", map[string]any{"liquidity": 500}).ID,
		"closed": c.createMarket(admin, "Closing", map[string]any{
			"closes_at": time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)}).ID,
	}
	// The example of the risk-free profit, half done: carol keeps 500 no
	// split at par. dave keeps 70 sets split at par.
	c.trade(cr["alice"], markets["main"], "yes", "buy", "500")
	c.trade(cr["bob"], markets["main"], "no", "buy", "500")
	c.splitMerge(cr["carol"], markets["main"], "split", "500")
	c.trade(cr["carol"], markets["main"], "yes", "sell", "500")
	c.splitMerge(cr["dave"], markets["main"], "split", "100")
	c.splitMerge(cr["dave"], markets["main"], "merge", "30")
	// A merge at par of shares bought on the curve.
	c.trade(cr["alice"], markets["other"], "yes", "buy", "10")
	c.trade(cr["alice"], markets["other"], "no", "buy", "10")
	c.splitMerge(cr["alice"], markets["other"], "merge", "10")
	c.trade(cr["bob"], markets["closed"], "yes", "buy", "5")
	// USDC: deposits credited at once, a split at par and a queued
	// withdrawal.
	c.must(http.MethodPost, "/api/wallet", cr["erin"], map[string]any{"address": "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"}, http.StatusOK, nil)
	c.must(http.MethodPost, "/api/token/deposit", cr["erin"], map[string]any{"amount": 300, "tx_hash": "0x" + strings.Repeat("ab", 32)}, http.StatusOK, nil)
	c.must(http.MethodPost, "/api/profile/trading-mode", cr["erin"], map[string]any{"mode": "usdc"}, http.StatusOK, nil)
	c.trade(cr["erin"], markets["main"], "yes", "buy", "20")
	c.splitMerge(cr["erin"], markets["main"], "split", "15")
	c.must(http.MethodPost, "/api/token/withdraw", cr["erin"], map[string]any{"amount": 50}, http.StatusOK, nil)
	// A challenged proposal with free votes.
	time.Sleep(3500 * time.Millisecond) // past closes_at
	var prop struct {
		ID string `json:"id"`
	}
	c.must(http.MethodPost, "/api/oracle/propose", cr["carol"], map[string]any{"market_id": markets["closed"], "outcome": "yes"}, http.StatusOK, &prop)
	c.must(http.MethodPost, "/api/oracle/challenge", cr["dave"], map[string]any{"proposal_id": prop.ID}, http.StatusOK, nil)
	c.must(http.MethodPost, "/api/oracle/vote", cr["erin"], map[string]any{"proposal_id": prop.ID, "outcome": "no"}, http.StatusOK, nil)
	c.must(http.MethodPost, "/api/oracle/vote", cr["alice"], map[string]any{"proposal_id": prop.ID, "outcome": "yes"}, http.StatusOK, nil)

	trees := observeLegacy(c, markets)
	exp := legacyExpect{Markets: markets, Trees: map[string]json.RawMessage{}}
	for k, v := range trees {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		exp.Trees[k] = b
	}
	b, err := json.MarshalIndent(exp, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(legacyExpectFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Killed, so that the next start replays the log of format 2.
	p.kill()
}
