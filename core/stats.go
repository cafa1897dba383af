package core

import (
	"marketd/core/money"
)

// Stats are the totals of the whole state that GET /api/admin/stats reports
// (docs/API.md, "GET /api/admin/stats"). The log and snapshot positions it also
// reports are not core's: the transport adds them.
type Stats struct {
	// Accounts counts every account but the house.
	Accounts int
	// Markets counts markets per status as seen at the time of the call: an
	// active market past its closing time counts as closed.
	Markets [NumStatuses]int
	// Trades counts trades per currency, in every market.
	Trades [money.NumCurrencies]uint64
	// Volume is the sum of trade costs per currency, in every market.
	Volume [money.NumCurrencies]money.Amount
	// OpenInterest is, per currency, the most the unresolved markets could
	// pay out: for each, the larger of the yes and no shares held.
	OpenInterest [money.NumCurrencies]money.Amount
	// ActiveKeys counts API keys neither revoked nor expired.
	ActiveKeys int
	// ActiveSessions counts sessions neither revoked nor expired.
	ActiveSessions int
}

// Stats returns the totals of the whole state while trading goes on. It
// reads the markets' published views, the account count and the auth table
// under its shared lock: no account is locked and no market waited for, so
// the totals are each a moment's, not one consistent cut.
func (e *Engine) Stats() Stats {
	now := e.now()
	st := Stats{Accounts: e.st.accounts.len() - 1} // the house is always there
	e.st.rangeMarkets(func(m *market) bool {
		st.addMarket(m.freshView(), now)
		return true
	})
	e.st.auth.countActive(&st, now)
	return st
}

// addMarket adds one market's view to the totals.
func (st *Stats) addMarket(v *MarketView, nowNanos int64) {
	st.Markets[v.StatusAt(nowNanos)]++
	for cur := range money.NumCurrencies {
		if !v.Open[cur] {
			continue
		}
		b := &v.Books[cur]
		st.Trades[cur] += b.Trades
		st.Volume[cur] = addSigned(st.Volume[cur], b.Volume)
		if v.Info.Status != StatusResolved {
			st.OpenInterest[cur] = addSigned(st.OpenInterest[cur], b.maxPayout(v.Info.Q0))
		}
	}
}

// maxPayout is what an unresolved book pays out at most: the shares held on
// the side holding more. Every share held was bought (moving q above q0) or
// made by a split, so a side's shares held are q - q0 + splits; the
// invariant checker holds the positions to that.
func (b *Book) maxPayout(q0 money.Amount) money.Amount {
	var most money.Amount
	for side := range NumSides {
		most = max(most, addSigned(b.Q[side]-q0, b.Splits))
	}
	return most
}

// countActive counts the keys and sessions usable at nowNanos.
func (t *authTable) countActive(st *Stats, nowNanos int64) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, ent := range t.keys {
		if ent.key.Active(nowNanos) {
			st.ActiveKeys++
		}
	}
	for _, ent := range t.sessions {
		if ent.session.Active(nowNanos) {
			st.ActiveSessions++
		}
	}
}
