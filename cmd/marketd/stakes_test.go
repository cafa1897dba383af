package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"marketd/core/money"
)

// TestOracleStakesServer runs a vote with stakes against the real binary,
// with -oracle-vote-quorum 50 and -oracle-min-voters 2: an account made
// after the market is refused, two voters outweigh one, the loser's stake
// goes to the winners pro rata and the market settles with the heavier
// side (docs/API.md, "The oracle").
func TestOracleStakesServer(t *testing.T) {
	t.Parallel()
	p := startProc(t, "marketd", procOptions{dataDir: t.TempDir(), args: []string{
		"-oracle-challenge-window", "1h", "-oracle-vote-window", "2s",
		"-oracle-vote-quorum", "50", "-oracle-min-voters", "2", "-oracle-vote-stake", "5"}})
	c := p.client(nil)
	admin := sessionCred(c.login("admin", testAdminPassword))
	var creds []cred
	for _, name := range []string{"st_prop", "st_chal", "st_v1", "st_v2", "st_v3"} {
		tok, _ := c.register(name)
		creds = append(creds, sessionCred(tok))
	}
	prop, chal, v1, v2, v3 := creds[0], creds[1], creds[2], creds[3], creds[4]
	closesAt := time.Now().Add(time.Second)
	m := c.createMarket(admin, "staked", map[string]any{"closes_at": closesAt.UTC().Format(time.RFC3339Nano)})
	lateTok, _ := c.register("st_late")
	for time.Now().Before(closesAt) {
		time.Sleep(50 * time.Millisecond)
	}
	var pr struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Stakes struct {
			Yes money.Amount `json:"yes"`
			No  money.Amount `json:"no"`
		} `json:"stakes"`
	}
	c.must(http.MethodPost, "/api/oracle/propose", prop, map[string]any{"market_id": m.ID, "outcome": "yes"}, http.StatusOK, &pr)
	c.must(http.MethodPost, "/api/oracle/challenge", chal, map[string]any{"proposal_id": pr.ID}, http.StatusOK, nil)
	c.mustError(http.MethodPost, "/api/oracle/vote", sessionCred(lateTok), map[string]any{"proposal_id": pr.ID, "outcome": "no"},
		http.StatusBadRequest, "Account created after the market cannot vote")
	c.mustError(http.MethodPost, "/api/oracle/vote", v1, map[string]any{"proposal_id": pr.ID, "outcome": "no", "stake": 4},
		http.StatusBadRequest, "stake: must be from 5 to 1e9")
	c.must(http.MethodPost, "/api/oracle/vote", v1, map[string]any{"proposal_id": pr.ID, "outcome": "no", "stake": 30}, http.StatusOK, nil)
	c.must(http.MethodPost, "/api/oracle/vote", v2, map[string]any{"proposal_id": pr.ID, "outcome": "no", "stake": 10}, http.StatusOK, nil)
	c.must(http.MethodPost, "/api/oracle/vote", v3, map[string]any{"proposal_id": pr.ID, "outcome": "yes", "stake": 20}, http.StatusOK, &pr)
	if pr.Stakes.No != money.Units(40) || pr.Stakes.Yes != money.Units(20) {
		t.Fatalf("stakes %+v, want 40 no, 20 yes", pr.Stakes)
	}
	deadline := time.Now().Add(oracleWait)
	for {
		c.must(http.MethodGet, "/api/oracle/status?proposal_id="+pr.ID, v1, nil, http.StatusOK, &pr)
		if pr.Status != "challenged" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("proposal still challenged %v after its vote window", oracleWait)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if pr.Status != "rejected" {
		t.Fatalf("proposal %s, want rejected (40 no against 20 yes)", pr.Status)
	}
	// The payouts follow the settlement on the market's goroutine: wait
	// for the last one, the loser's stake shared 30:10.
	want := map[string]money.Amount{"st_v1": money.Units(1000 + 15), "st_v2": money.Units(1000 + 5), "st_v3": money.Units(1000 - 20)}
	for name, cr := range map[string]cred{"st_v1": v1, "st_v2": v2, "st_v3": v3} {
		for {
			got := c.points(cr).Balance
			if got == want[name] {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s holds %s, want %s", name, got, want[name])
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if mk := c.market(m.ID.String()); mk.Status != "resolved" || mk.Outcome == nil || *mk.Outcome != "no" {
		t.Fatalf("market %+v, want resolved no", mk)
	}
	if code := p.terminate(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// TestCustodyRecordWarns: the record custody credits without an operator,
// and the server says so at start.
func TestCustodyRecordWarns(t *testing.T) {
	t.Parallel()
	p := startProc(t, "marketd", procOptions{dataDir: t.TempDir(), args: []string{"-custody", "record"}})
	if _, err := p.stderr.waitFor(func(s string) bool {
		return strings.Contains(s, "level=WARN") && strings.Contains(s, "custody record")
	}, startTimeout); err != nil {
		t.Fatalf("no warning of the record custody: %v\n%s", err, p.output())
	}
	c := p.client(nil)
	tok, _ := c.register("rec_user")
	me := sessionCred(tok)
	c.must(http.MethodPost, "/api/wallet", me, map[string]any{"address": "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"}, http.StatusOK, nil)
	var dep tokenJSON
	c.must(http.MethodPost, "/api/token/deposit", me, map[string]any{"amount": 5, "tx_hash": "0x" + strings.Repeat("cd", 32)}, http.StatusOK, &dep)
	if dep.Deposit["status"] != "credited" || dep.USDC != money.Units(5) {
		t.Fatalf("record custody deposit %+v, want credited at once", dep)
	}
}
