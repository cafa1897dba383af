package core

import (
	"cmp"
	"slices"

	"github.com/google/uuid"

	"marketd/core/money"
)

// VigEntry is one market's vig for an account in one role and currency:
// accrued and awaiting settlement (Settled false), or settled, with what
// was paid.
type VigEntry struct {
	VigPayment
	Settled bool
}

// VigReport is what an account earned as market creator and as referrer
// in one currency (GET /api/vig).
type VigReport struct {
	Currency      money.Currency
	Paid          money.Amount // total paid
	Accrued       money.Amount // accrued in markets not settled yet
	FromMarkets   money.Amount // paid as creator
	FromReferrals money.Amount // paid as referrer
	Entries       []VigEntry   // unsettled first, then newest settlement first
}

// VigReport returns an account's vig in a currency. Settled markets come
// from the account's own vig payments; unsettled ones from the books of
// the markets it created and the positions of the accounts it referred,
// so the report walks only those, never every account or market.
func (e *Engine) VigReport(id uuid.UUID, cur money.Currency) (VigReport, bool) {
	a := e.st.account(id)
	if a == nil || !cur.Valid() {
		return VigReport{}, false
	}
	r := VigReport{Currency: cur}
	a.mu.Lock()
	paid := a.vig()
	a.mu.Unlock()
	for _, v := range paid { // append-only: read without the lock
		if v.Currency != cur {
			continue
		}
		r.Entries = append(r.Entries, VigEntry{VigPayment: v, Settled: true})
		r.Paid = addSigned(r.Paid, v.Paid)
		if v.Role == VigCreator {
			r.FromMarkets = addSigned(r.FromMarkets, v.Paid)
		} else {
			r.FromReferrals = addSigned(r.FromReferrals, v.Paid)
		}
	}
	for _, mid := range e.st.createdMarkets(id) {
		if v, ok := e.Market(mid); ok && v.Info.Status != StatusResolved && v.Open[cur] && v.Books[cur].VigCreator > 0 {
			r.add(VigPayment{Market: mid, Currency: cur, Role: VigCreator, Accrued: v.Books[cur].VigCreator})
		}
	}
	fromReferees := make(map[uuid.UUID]money.Amount)
	for _, rid := range e.st.referees(id) {
		ref := e.st.account(rid)
		ref.mu.Lock()
		for p := range ref.refs().positions.all() {
			// Positions leave at settlement, so these markets are unsettled.
			if p.Currency == cur && p.Referrer == id && p.RefVig > 0 {
				fromReferees[p.Market] = addSigned(fromReferees[p.Market], p.RefVig)
			}
		}
		ref.mu.Unlock()
	}
	for mid, acc := range fromReferees {
		r.add(VigPayment{Market: mid, Currency: cur, Role: VigReferrer, Accrued: acc})
	}
	slices.SortFunc(r.Entries, func(x, y VigEntry) int {
		if x.Settled != y.Settled {
			if !x.Settled {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(y.Time, x.Time); c != 0 {
			return c
		}
		if c := compareIDs(x.Market, y.Market); c != 0 {
			return c
		}
		return cmp.Compare(x.Role, y.Role)
	})
	return r, true
}

// add adds an unsettled accrual.
func (r *VigReport) add(v VigPayment) {
	r.Entries = append(r.Entries, VigEntry{VigPayment: v})
	r.Accrued = addSigned(r.Accrued, v.Accrued)
}
