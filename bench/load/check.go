package load

import (
	"fmt"

	"marketd/bench/client"
	"marketd/core/money"
)

// CheckResult is the outcome of one invariant checked through the API.
type CheckResult struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Detail says what was compared, or the first violation.
	Detail string `json:"detail"`
}

// Check verifies through the API, once the load has stopped, that every
// bot's KP balance equals the sum of its ledger and its last entry's
// balance_after; that each bot's positions are those its answers gave
// (unless some requests got no answer, when the server may or may not
// have applied them); and that in every market the bots' yes shares less
// their no shares equal q_yes - q_no (a trade moves q with the shares, a
// split or a merge moves both sides alike). The last holds only when the
// load's bots are the market's only traders, as with -spawn.
func Check(t *Target) []CheckResult {
	c, unanswered := t.Client, t.Unanswered()
	ledgers := CheckResult{Name: "balance equals ledger", OK: true}
	positions := CheckResult{Name: "positions equal the answers", OK: true}
	if unanswered > 0 {
		positions.Detail = fmt.Sprintf("skipped: %d requests got no answer", unanswered)
	}
	netYes := make([]money.Amount, len(t.Markets)) // yes less no shares, over the bots
	index := make(map[string]int, len(t.Markets))
	for i, id := range t.Markets {
		index[id] = i
	}
	fail := func(r *CheckResult, format string, args ...any) {
		if r.OK {
			r.OK, r.Detail = false, fmt.Sprintf(format, args...)
		}
	}
	for _, b := range t.bots {
		cr := client.Credentials{Key: b.bot.Key.Key}
		l, err := c.KPLedger(cr)
		if err != nil {
			fail(&ledgers, "%s: %v", b.bot.Name, err)
			continue
		}
		if msg := LedgerMismatch(l); msg != "" {
			fail(&ledgers, "%s: %s", b.bot.Name, msg)
		}
		p, err := c.GetPortfolio(cr)
		if err != nil {
			fail(&positions, "%s: %v", b.bot.Name, err)
			continue
		}
		got := make([][2]int64, len(t.Markets))
		for _, pos := range p.Positions {
			m, ok := index[pos.MarketID.String()]
			if !ok || pos.Currency != "kp" {
				fail(&positions, "%s holds %s shares of market %s in %s, which the load never traded", b.bot.Name, pos.Shares, pos.MarketID, pos.Currency)
				continue
			}
			side := 0
			if pos.Side == "no" {
				side = 1
			}
			got[m][side] += int64(pos.Shares / money.Scale)
			if side == 0 {
				netYes[m] += pos.Shares
			} else {
				netYes[m] -= pos.Shares
			}
		}
		if unanswered == 0 {
			for m := range got {
				if want := b.shares[m]; got[m] != want {
					fail(&positions, "%s holds yes/no %v of market %s; its answers gave %v", b.bot.Name, got[m], t.Markets[m], want)
				}
			}
		}
	}
	if ledgers.OK {
		ledgers.Detail = fmt.Sprintf("%d bots", len(t.bots))
	}
	if positions.OK && unanswered == 0 {
		positions.Detail = fmt.Sprintf("%d bots, %d markets", len(t.bots), len(t.Markets))
	}
	shares := CheckResult{Name: "positions add up to the markets' shares", OK: true,
		Detail: fmt.Sprintf("%d markets", len(t.Markets))}
	for m, id := range t.Markets {
		mk, err := c.GetMarket(id)
		if err != nil {
			fail(&shares, "%v", err)
			continue
		}
		if want := mk.Liquidity.QYes - mk.Liquidity.QNo; netYes[m] != want {
			fail(&shares, "market %s: the bots hold %s more yes than no shares; q_yes - q_no is %s", id, netYes[m], want)
		}
	}
	return []CheckResult{ledgers, positions, shares}
}

// LedgerMismatch says how a ledger fails to add up to its balance, "" when it
// does: the sum of its amounts and its last balance_after must both equal
// the balance, and each balance_after must be the previous one plus the
// entry's amount.
func LedgerMismatch(l client.Ledger) string {
	var sum money.Amount
	for i, e := range l.Entries {
		sum += e.Amount
		if e.BalanceAfter != sum {
			return fmt.Sprintf("entry %d (%s %s): balance_after %s, but the entries up to it sum to %s", i, e.TxType, e.RefID, e.BalanceAfter, sum)
		}
	}
	if sum != l.Balance {
		return fmt.Sprintf("the ledger sums to %s, the balance is %s", sum, l.Balance)
	}
	return ""
}
