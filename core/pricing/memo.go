package pricing

import "marketd/core/money"

// Memo keeps the curves of the last two states a market's quotes
// evaluated, so that a trade from the state the previous one ended at
// evaluates one curve instead of two: the trade path's pricing was two
// exp and two log1p per trade, half of them recomputing the state the
// last trade had just evaluated. A curve is a pure function of alpha and
// q, so a Memo's quotes are bit for bit those of QuoteBuy and QuoteSell
// (TestMemoQuotesAsThePlainFunctions).
//
// The zero Memo is empty; a nil *Memo quotes as the plain functions do. A
// Memo is not safe for concurrent use: each belongs to one market's
// goroutine.
type Memo struct {
	ents [2]memoEntry
	next int // the entry to replace on a miss
}

// memoEntry is a curve, its state and its prices in side order. The zero
// entry is empty: its alpha, 0, is no market's (MinAlpha), so no lookup
// matches it. The prices are kept with the curve because a state is
// quoted twice, as a trade's after and as the next one's before, and each
// quote needs its prices: they are taken once per state rather than once
// per quote (a division and seven other operations a trade).
type memoEntry struct {
	alpha  float64
	q      [2]money.Amount
	c      curve
	prices [2]float64
}

// curve returns the memo's entry at (alpha, q), its curve and its prices
// evaluated into it on a miss. A hit keeps its entry and makes the other
// the next to go, so that a quote refused at the state before (a slippage
// limit, a balance) still finds it. The entry is read in place rather than
// copied out (twice a quote): a quote's two calls never replace each
// other's entry, since a miss replaces the one the call before did not
// return, and the pointer is used only until the quote returns.
func (m *Memo) curve(alpha float64, q [2]money.Amount) *memoEntry {
	for i := range m.ents {
		if e := &m.ents[i]; e.q == q && e.alpha == alpha {
			m.next = 1 - i
			return e
		}
	}
	e := &m.ents[m.next]
	e.alpha, e.q = alpha, q
	e.c.eval(alpha, q)
	e.prices[0], e.prices[1] = e.c.pricesYesNo(alpha)
	m.next = 1 - m.next
	return e
}

// QuoteBuy is QuoteBuy through the memo, written into *qt rather than
// returned: a 72-byte Quote returned by value was copied once per layer
// of the trade's call (docs/PERFORMANCE.md, "The trade's own
// instructions"). On an error *qt is left as it was.
func (m *Memo) QuoteBuy(qt *Quote, alpha float64, q [2]money.Amount, side int, shares money.Amount) error {
	if m == nil {
		v, err := QuoteBuy(alpha, q, side, shares)
		if err == nil {
			*qt = v
		}
		return err
	}
	after, err := afterBuy(alpha, q, side, shares)
	if err != nil {
		return err
	}
	e0 := m.curve(alpha, q)
	e1 := m.curve(alpha, after)
	qt.fillPriced(buyCost(&e0.c, &e1.c), after, &e0.prices, &e1.prices)
	return nil
}

// QuoteSell is QuoteSell through the memo, written into *qt as QuoteBuy's.
func (m *Memo) QuoteSell(qt *Quote, alpha float64, q [2]money.Amount, side int, shares money.Amount) error {
	if m == nil {
		v, err := QuoteSell(alpha, q, side, shares)
		if err == nil {
			*qt = v
		}
		return err
	}
	after, err := afterSell(alpha, q, side, shares)
	if err != nil {
		return err
	}
	e0 := m.curve(alpha, q)
	e1 := m.curve(alpha, after)
	qt.fillPriced(sellProceeds(&e0.c, &e1.c), after, &e0.prices, &e1.prices)
	return nil
}
