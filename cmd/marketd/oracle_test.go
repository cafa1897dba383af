package main

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"marketd/transport/wire"
)

// oracleWait bounds how long the test waits for a deadline to be applied
// after it passed: docs/API.md, "The oracle", allows one second; the rest is
// headroom for a loaded machine.
const oracleWait = 20 * time.Second

// proposalStatus is the part of a proposal object the test follows.
type proposalStatus struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// TestOracleAcrossRestart proposes, challenges and votes on one market and
// proposes on another, then kills the server (SIGKILL) and restarts it:
// the first proposal comes back as it was, and the second, whose 3-second
// challenge window passes while the server is down or just after, is
// accepted and settles its market without any request.
func TestOracleAcrossRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := procOptions{dataDir: dir, args: []string{"-oracle-challenge-window", "3s", "-oracle-vote-window", "1h"}}
	first := startProc(t, "first run", opts)
	c := first.client(nil)
	admin := sessionCred(c.login("admin", testAdminPassword))
	// Accounts made after a market cannot vote on it: register first.
	var creds []cred
	for _, name := range []string{"oracle_alice", "oracle_bob", "oracle_carol"} {
		tok, _ := c.register(name)
		creds = append(creds, sessionCred(tok))
	}
	// The markets are created and traded before they close: on a loaded
	// machine (CI beside other work) a second was not always enough.
	closesAt := time.Now().Add(3 * time.Second)
	extra := map[string]any{"closes_at": closesAt.UTC().Format(time.RFC3339Nano)}
	voted := c.createMarket(admin, "oracle voted", extra)
	undisputed := c.createMarket(admin, "oracle undisputed", extra)
	alice, bob, carol := creds[0], creds[1], creds[2]
	c.trade(carol, undisputed.ID.String(), "yes", "buy", "5")
	for time.Now().Before(closesAt) { // proposals need a closed market
		time.Sleep(50 * time.Millisecond)
	}

	var p proposalStatus
	c.must(http.MethodPost, "/api/oracle/propose", alice, map[string]any{"market_id": voted.ID, "outcome": "yes"}, http.StatusOK, &p)
	c.must(http.MethodPost, "/api/oracle/challenge", bob, map[string]any{"proposal_id": p.ID}, http.StatusOK, nil)
	c.must(http.MethodPost, "/api/oracle/vote", carol, map[string]any{"proposal_id": p.ID, "outcome": "no"}, http.StatusOK, nil)
	aliceBalance := c.points(alice).Balance
	c.must(http.MethodPost, "/api/oracle/propose", alice, map[string]any{"market_id": undisputed.ID, "outcome": "yes"}, http.StatusOK, nil)
	before := c.tree("/api/oracle/status?market_id="+voted.ID.String(), alice)
	first.kill()

	second := startProc(t, "after SIGKILL", opts)
	c = second.client(nil)
	if after := c.tree("/api/oracle/status?market_id="+voted.ID.String(), alice); !reflect.DeepEqual(after, before) {
		t.Fatalf("challenged proposal after restart:\n got %v\nwant %v", after, before)
	}
	deadline := time.Now().Add(oracleWait)
	for {
		c.must(http.MethodGet, "/api/oracle/status?market_id="+undisputed.ID.String(), alice, nil, http.StatusOK, &p)
		if p.Status == "accepted" {
			break
		}
		if p.Status != "proposed" || time.Now().After(deadline) {
			t.Fatalf("undisputed proposal %+v after restart, want accepted within %v", p, oracleWait)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var m wire.Market
	c.must(http.MethodGet, "/api/markets/"+undisputed.ID.String(), cred{}, nil, http.StatusOK, &m)
	if m.Status != "resolved" {
		t.Errorf("market %s after the proposal's acceptance, want resolved", m.Status)
	}
	if got := c.points(alice).Balance; got != aliceBalance {
		t.Errorf("proposer balance %v, want %v (bond returned)", got, aliceBalance)
	}
	if code := second.terminate(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
}
