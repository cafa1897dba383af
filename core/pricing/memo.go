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

// curve sets c to the curve at (alpha, q), from the memo when it holds it.
// A hit keeps its entry and makes the other the next to go, so that a
// quote refused at the state before (a slippage limit, a balance) still
// finds it.
func (m *Memo) curve(alpha float64, q [2]money.Amount, c *curve) {
	for i := range m.ents {
		if e := &m.ents[i]; e.ok && e.alpha == alpha && e.q == q {
			*c = e.c
			m.next = 1 - i
			return
		}
	}
	c.eval(alpha, q)
	m.ents[m.next] = memoEntry{alpha: alpha, q: q, c: *c, ok: true}
	m.next = 1 - m.next
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
	var c0, c1 curve
	m.curve(alpha, q, &c0)
	m.curve(alpha, after, &c1)
	return quote(alpha, &c0, &c1, buyCost(&c0, &c1), after), nil
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
	var c0, c1 curve
	m.curve(alpha, q, &c0)
	m.curve(alpha, after, &c1)
	return quote(alpha, &c0, &c1, sellProceeds(&c0, &c1), after), nil
}
