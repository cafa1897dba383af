package core

import (
	"slices"

	"github.com/google/uuid"

	"marketd/core/money"
)

// AccountView is a copy of an account's state at one moment. Its Info's
// strings and password hash share the account's memory, which is never
// written: the hash must not be modified.
type AccountView struct {
	ID        uuid.UUID
	LSN       uint64
	Info      AccountInfo
	Balances  [money.NumCurrencies]money.Amount
	Positions []Position     // sorted by market, then currency
	Trades    []TradeSummary // recent trades, newest first
	LedgerLen [money.NumCurrencies]int
}

// Account returns a copy of an account's state.
func (e *Engine) Account(id uuid.UUID) (AccountView, bool) {
	a := e.st.account(id)
	if a == nil {
		return AccountView{}, false
	}
	a.mu.Lock()
	v := AccountView{ID: a.id, LSN: a.lsn, Info: a.infoOf(), Balances: a.balances, Trades: a.recentTrades()}
	for c := range money.NumCurrencies {
		v.LedgerLen[c] = a.refs().ledger[c].Len()
	}
	v.Positions = a.appendPositions(make([]Position, 0, a.positionCount()))
	a.mu.Unlock()
	slices.Reverse(v.Trades)
	sortPositions(v.Positions)
	return v, true
}

func sortPositions(ps []Position) {
	slices.SortFunc(ps, func(a, b Position) int {
		if c := compareIDs(a.Market, b.Market); c != 0 {
			return c
		}
		return int(a.Currency) - int(b.Currency)
	})
}

// AccountByName finds an account by name, ignoring case.
func (e *Engine) AccountByName(name string) (AccountView, bool) {
	e.st.namesMu.Lock()
	id, ok := e.st.nameLookup(name)
	e.st.namesMu.Unlock()
	if !ok {
		return AccountView{}, false
	}
	return e.Account(id)
}

// Ledger returns up to limit of an account's ledger entries in a currency,
// newest first, skipping the offset newest, and the total number of
// entries.
func (e *Engine) Ledger(id uuid.UUID, cur money.Currency, offset, limit int) ([]LedgerEntry, int, bool) {
	a := e.st.account(id)
	if a == nil || !cur.Valid() {
		return nil, 0, false
	}
	a.mu.Lock()
	l := a.refs().ledger[cur].snapshot()
	a.mu.Unlock()
	// Entries are never modified once appended: l is safe to read unlocked.
	total := l.Len()
	end := max(total-max(offset, 0), 0)
	start := max(end-max(limit, 0), 0)
	out := appendValues(make([]LedgerEntry, 0, end-start), &l, start, end)
	slices.Reverse(out)
	return out, total, true
}

// Market returns a market's latest published view.
func (e *Engine) Market(id uuid.UUID) (*MarketView, bool) {
	m := e.st.market(id)
	if m == nil {
		return nil, false
	}
	return m.freshView(), true
}

// Markets returns every market's latest view, in no particular order.
func (e *Engine) Markets() []*MarketView {
	var out []*MarketView
	e.st.rangeMarkets(func(m *market) bool {
		out = append(out, m.freshView())
		return true
	})
	return out
}

// Supply returns what was minted and burned so far, per currency.
func (e *Engine) Supply() (minted, burned [money.NumCurrencies]money.Amount) {
	e.st.supply.mu.Lock()
	defer e.st.supply.mu.Unlock()
	return e.st.supply.minted, e.st.supply.burned
}
