package main

import (
	"testing"

	"marketd/core/money"
)

// TestSplitSellNoProfitServer runs the example of docs/API.md, "Split and
// merge", against the real binary: on a new market (q0 = 1000 a side) after
// one account buys 500 yes and another 500 no, a third splits 500 and sells
// both sides. With splits at par it ended with 1024.999999 KP from 1000,
// holding nothing; on the curve it ends with at most its 1000.
func TestSplitSellNoProfitServer(t *testing.T) {
	t.Parallel()
	p := startProc(t, "marketd", procOptions{dataDir: t.TempDir()})
	c := p.client(nil)
	admin := sessionCred(c.login("admin", testAdminPassword))
	m := c.createMarket(admin, "Will it rain", nil)
	aliceTok, _ := c.register("alice")
	bobTok, _ := c.register("bob")
	carolTok, _ := c.register("carol")
	alice, bob, carol := sessionCred(aliceTok), sessionCred(bobTok), sessionCred(carolTok)

	c.trade(alice, m.ID.String(), "yes", "buy", "500")
	c.trade(bob, m.ID.String(), "no", "buy", "500")
	sp := c.splitMerge(carol, m.ID.String(), "split", "500")
	sellYes := c.trade(carol, m.ID.String(), "yes", "sell", "500")
	sellNo := c.trade(carol, m.ID.String(), "no", "sell", "500")
	me := c.me(carol)
	if y, n := heldShares(&me, m.ID.String(), "yes"), heldShares(&me, m.ID.String(), "no"); y != 0 || n != 0 {
		t.Fatalf("carol holds %s yes, %s no after selling both sides", y, n)
	}
	t.Logf("split 500 cost %s; sold yes for %s, no for %s; balance %s", sp.Cost, sellYes.Cost, sellNo.Cost, me.Agent.Balance)
	if me.Agent.Balance > money.Units(1000) {
		t.Fatalf("carol split 500, sold both sides and ends with %s from 1000: a risk-free profit of %s",
			me.Agent.Balance, me.Agent.Balance-money.Units(1000))
	}
	// Back at q0, the market holds what alice and bob are owed and more.
	after := c.market(m.ID.String())
	if after.Liquidity.QYes != money.Units(1500) || after.Liquidity.QNo != money.Units(1500) {
		t.Fatalf("q after the cycle %s/%s, want 1500/1500 (alice's and bob's 500 over q0)", after.Liquidity.QYes, after.Liquidity.QNo)
	}
}
