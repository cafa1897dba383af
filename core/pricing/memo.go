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

type memoEntry struct {
	alpha float64
	q     [2]money.Amount
	c     curve
	ok    bool
}

// curve returns the curve at (alpha, q): the memo's entry, evaluated into
// it on a miss. A hit keeps its entry and makes the other the next to go,
// so that a quote refused at the state before (a slippage limit, a
// balance) still finds it. The entry is read in place rather than copied
// out (72 bytes, twice a quote): a quote's two calls never replace each
// other's entry, since a miss replaces the one the call before did not
// return, and the pointer is used only until the quote returns.
func (m *Memo) curve(alpha float64, q [2]money.Amount) *curve {
	for i := range m.ents {
		if e := &m.ents[i]; e.ok && e.alpha == alpha && e.q == q {
			m.next = 1 - i
			return &e.c
		}
	}
	e := &m.ents[m.next]
	e.alpha, e.q, e.ok = alpha, q, true
	e.c.eval(alpha, q)
	m.next = 1 - m.next
	return &e.c
}

// QuoteBuy is QuoteBuy through the memo.
func (m *Memo) QuoteBuy(alpha float64, q [2]money.Amount, side int, shares money.Amount) (Quote, error) {
	if m == nil {
		return QuoteBuy(alpha, q, side, shares)
	}
	after, err := afterBuy(alpha, q, side, shares)
	if err != nil {
		return Quote{}, err
	}
	c0 := m.curve(alpha, q)
	c1 := m.curve(alpha, after)
	return quote(alpha, c0, c1, buyCost(c0, c1), after), nil
}

// QuoteSell is QuoteSell through the memo.
func (m *Memo) QuoteSell(alpha float64, q [2]money.Amount, side int, shares money.Amount) (Quote, error) {
	if m == nil {
		return QuoteSell(alpha, q, side, shares)
	}
	after, err := afterSell(alpha, q, side, shares)
	if err != nil {
		return Quote{}, err
	}
	c0 := m.curve(alpha, q)
	c1 := m.curve(alpha, after)
	return quote(alpha, c0, c1, sellProceeds(c0, c1), after), nil
}
