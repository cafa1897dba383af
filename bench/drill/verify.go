package drill

import (
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"marketd/bench/client"
	"marketd/bench/load"
	"marketd/core/money"
)

// findings is what one verification found.
type findings struct {
	// lost counts acknowledged operations missing or changed.
	lost int
	// applied counts the operations in flight found applied, dropped
	// those found not applied.
	applied, dropped int
	violations       []string
}

func (f *findings) violate(format string, args ...any) {
	f.violations = append(f.violations, fmt.Sprintf(format, args...))
}

// verify checks the bot's account on the server against what it was
// acknowledged, resolving its operation in flight.
func (b *bot) verify(c *client.Client, markets []string, f *findings) {
	cr := b.credentials()
	kp, err := c.KPLedger(cr)
	if err != nil {
		f.violate("%s: read the KP ledger: %v", b.Name, err)
		return
	}
	usdc, err := c.USDCLedger(cr)
	if err != nil {
		f.violate("%s: read the USDC ledger: %v", b.Name, err)
		return
	}
	p := b.pending
	b.pending = nil
	resolved := false
	for _, l := range []struct {
		name string
		usdc bool
		got  client.Ledger
	}{{"KP", false, kp}, {"USDC", true, usdc}} {
		want := b.kp
		if l.usdc {
			want = b.usdc
		}
		rest := b.compareLedger(l.name, want, l.got.Entries, f)
		if p != nil && p.usdc == l.usdc && ledgerKind(p.kind) && len(rest) == 1 && matchesPending(p, rest[0]) {
			p.entry = entry{txType: rest[0].TxType, refID: rest[0].RefID, amount: rest[0].Amount, balanceAfter: rest[0].BalanceAfter}
			b.acknowledge(p)
			resolved = true
			f.applied++
			rest = nil
		}
		for _, e := range rest {
			f.violate("%s: %s ledger entry %s %s (%s, balance after %s) was never acknowledged nor in flight", b.Name, l.name, e.TxType, e.RefID, e.Amount, e.BalanceAfter)
		}
		if msg := load.LedgerMismatch(l.got); msg != "" {
			f.violate("%s: %s ledger: %s", b.Name, l.name, msg)
		}
	}
	if p != nil && !ledgerKind(p.kind) {
		resolved = b.verifyKeys(c, p, f)
	} else {
		b.verifyKeys(c, nil, f)
	}
	if p != nil && !resolved {
		f.dropped++
	}
	b.verifyPositions(c, markets, f)
}

func ledgerKind(k kind) bool { return k != opKeyCreate && k != opKeyRevoke }

// matchesPending says whether e is the entry p would make.
func matchesPending(p *op, e client.LedgerEntry) bool {
	switch p.kind {
	case opBuy:
		return e.TxType == "trade_buy"
	case opSell:
		return e.TxType == "trade_sell"
	case opSplit, opMerge:
		return e.TxType == p.kind.String()
	case opDeposit:
		return e.TxType == "deposit" && e.Amount == p.amount
	case opWithdraw:
		return e.TxType == "withdrawal" && e.Amount == -p.amount
	}
	return false
}

// compareLedger checks that got starts with want, entry for entry, counts
// each acknowledged entry missing or different as lost, and returns the
// entries past want.
func (b *bot) compareLedger(name string, want []entry, got []client.LedgerEntry, f *findings) []client.LedgerEntry {
	for i, w := range want {
		if i >= len(got) {
			f.lost += len(want) - i
			f.violate("%s: %d acknowledged %s ledger entries missing from entry %d (%s %s)", b.Name, len(want)-i, name, i, w.txType, w.refID)
			return nil
		}
		g := got[i]
		if g.TxType != w.txType || g.Amount != w.amount || g.BalanceAfter != w.balanceAfter || (w.refID != uuid.Nil && g.RefID != w.refID) {
			f.lost++
			f.violate("%s: %s ledger entry %d is %s %s %s (balance after %s); acknowledged %s %s %s (balance after %s)", b.Name, name, i,
				g.TxType, g.RefID, g.Amount, g.BalanceAfter, w.txType, w.refID, w.amount, w.balanceAfter)
		}
	}
	return got[len(want):]
}

// verifyKeys checks the bot's keys: every acknowledged one there with its
// status, each active one authenticating and each revoked one refused with
// 401, none unknown but the one of a key creation in flight (p). It returns whether p
// was found applied.
func (b *bot) verifyKeys(c *client.Client, p *op, f *findings) bool {
	list, err := c.Keys(b.credentials())
	if err != nil {
		f.violate("%s: list the keys with its first key: %v", b.Name, err)
		return false
	}
	byID := make(map[uuid.UUID]client.KeyInfo, len(list))
	for _, k := range list {
		byID[k.ID] = k
	}
	applied := false
	if p != nil && p.kind == opKeyCreate {
		for _, k := range list {
			if k.Name == p.keyName {
				// Applied, but its secret never reached the bot: it stays
				// in the list as a key the bot may revoke.
				b.keys = append(b.keys, key{id: k.ID, name: k.Name})
				applied = true
				f.applied++
			}
		}
	}
	if p != nil && p.kind == opKeyRevoke {
		if k, ok := byID[b.keys[p.keyRef].id]; ok && k.Status == "revoked" {
			b.keys[p.keyRef].revoked = true
			applied = true
			f.applied++
		}
	}
	known := make(map[uuid.UUID]bool, len(b.keys)+1)
	known[b.Key.ID] = true
	if k, ok := byID[b.Key.ID]; !ok || k.Status != "active" {
		f.lost++
		f.violate("%s: its first key %s is not active: %+v", b.Name, b.Key.ID, k)
	}
	for _, want := range b.keys {
		known[want.id] = true
		k, ok := byID[want.id]
		status := "active"
		if want.revoked {
			status = "revoked"
		}
		if !ok || k.Status != status {
			f.lost++
			f.violate("%s: acknowledged key %s (%s) should be %s; the server lists %+v", b.Name, want.id, want.name, status, k)
		}
	}
	for _, k := range b.keys {
		if k.secret == "" {
			continue // created in flight: its secret never reached the bot
		}
		_, err := c.Keys(client.Credentials{Key: k.secret})
		switch {
		case !k.revoked && err != nil:
			f.lost++
			f.violate("%s: acknowledged key %s does not authenticate: %v", b.Name, k.id, err)
		case k.revoked && !client.IsStatus(err, http.StatusUnauthorized):
			f.lost++
			f.violate("%s: revoked key %s answered %v, want 401", b.Name, k.id, err)
		}
	}
	for _, k := range list {
		if !known[k.ID] {
			f.violate("%s: key %s (%s) was never acknowledged nor in flight", b.Name, k.ID, k.Name)
		}
	}
	return applied
}

// verifyPositions checks the bot's positions against the shares its
// applied operations give.
func (b *bot) verifyPositions(c *client.Client, markets []string, f *findings) {
	pf, err := c.GetPortfolio(b.credentials())
	if err != nil {
		f.violate("%s: read the portfolio: %v", b.Name, err)
		return
	}
	got := make([][2]money.Amount, len(markets))
	index := make(map[string]int, len(markets))
	for i, id := range markets {
		index[id] = i
	}
	for _, pos := range pf.Positions {
		m, ok := index[pos.MarketID.String()]
		if !ok || pos.Currency != "kp" {
			f.violate("%s: holds %s %s shares of market %s in %s, never traded", b.Name, pos.Shares, pos.Side, pos.MarketID, pos.Currency)
			continue
		}
		side := 0
		if pos.Side == "no" {
			side = 1
		}
		got[m][side] += pos.Shares
	}
	for m := range markets {
		if got[m] != b.shares[m] {
			f.lost++
			f.violate("%s: holds yes/no %v of market %s; its applied operations give %v", b.Name, got[m], markets[m], b.shares[m])
		}
	}
}

// verifyMarkets checks that in every market the bots' yes shares less
// their no shares equal q_yes - q_no.
func verifyMarkets(c *client.Client, markets []string, bots []*bot, f *findings) {
	for m, id := range markets {
		mk, err := c.GetMarket(id)
		if err != nil {
			f.violate("read market %s: %v", id, err)
			continue
		}
		var net money.Amount
		for _, b := range bots {
			net += b.shares[m][0] - b.shares[m][1]
		}
		if want := mk.Liquidity.QYes - mk.Liquidity.QNo; net != want {
			f.violate("market %s: the bots hold %s more yes than no shares; q_yes - q_no is %s", id, net, want)
		}
	}
}
