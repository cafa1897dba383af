package pricing

import (
	"fmt"

	"marketd/core/money"
)

// Complete sets: a split sells n yes and n no shares together and a merge
// buys them back, both on the curve, so that every operation on a market is
// priced by the one cost function. A split at par (1 a set) let anyone take
// the overround from the house: with LS-LMSR the prices of a set sum to more
// than 1, so a set bought at 1 sold back on the curve for more than 1.

// afterSplit returns q after a split of n sets, or ErrLiquidityLimit.
func afterSplit(alpha float64, q [2]money.Amount, n money.Amount) ([2]money.Amount, error) {
	if !tradeInRange(alpha, q, 0, n) {
		return q, tradeError(alpha, q, 0, n)
	}
	for side := range 2 {
		// Compared as MaxQ - q so that a huge n cannot overflow.
		if n > MaxQ-q[side] {
			return q, fmt.Errorf("%w: q[%d] = %d + %d > %d", ErrLiquidityLimit, side, q[side], n, MaxQ)
		}
	}
	return [2]money.Amount{q[0] + n, q[1] + n}, nil
}

// afterMerge returns q after a merge of n sets; both sides must stay >= 1.
func afterMerge(alpha float64, q [2]money.Amount, n money.Amount) ([2]money.Amount, error) {
	if !tradeInRange(alpha, q, 0, n) {
		return q, tradeError(alpha, q, 0, n)
	}
	if n >= q[0] || n >= q[1] {
		return q, fmt.Errorf("%w: merging %d sets from q = %v", ErrOutOfRange, n, q)
	}
	return [2]money.Amount{q[0] - n, q[1] - n}, nil
}

// QuoteSplit prices a split of n sets at q: C(q + n(1,1)) - C(q), rounded up
// after widening by the error bound as a buy's cost (the bound of a trade
// depends only on the two states, not on how many sides moved), its vig, the
// prices before and after and the new q. The cost is at least n, since the
// prices sum to at least 1. Errors are those of BuyCost.
func QuoteSplit(alpha float64, q [2]money.Amount, n money.Amount) (Quote, error) {
	after, err := afterSplit(alpha, q, n)
	if err != nil {
		return Quote{}, err
	}
	return quoteUp(alpha, q, after), nil
}

// QuoteMerge prices a merge of n sets at q: C(q) - C(q - n(1,1)), rounded
// down after narrowing by the error bound as a sell's proceeds, its vig, the
// prices before and after and the new q. The caller keeps both sides at or
// above the market's initial q; a merge that would take either to 0, and
// other arguments out of range, return ErrOutOfRange.
func QuoteMerge(alpha float64, q [2]money.Amount, n money.Amount) (Quote, error) {
	after, err := afterMerge(alpha, q, n)
	if err != nil {
		return Quote{}, err
	}
	return quoteDown(alpha, q, after), nil
}

// quoteUp prices a move from q to after that raises C, as a split: its
// cost C(after) - C(q) rounded up (buyCost), with its vig and prices.
// QuoteBuy does the same inline: it is the trade path, where this call
// cost 5% more instructions (valgrind --tool=cachegrind, BenchmarkQuoteBuy).
func quoteUp(alpha float64, q, after [2]money.Amount) Quote {
	var c0, c1 curve
	c0.eval(alpha, q)
	c1.eval(alpha, after)
	return quote(alpha, &c0, &c1, buyCost(&c0, &c1), after)
}

// quoteDown prices a move from q to after that lowers C, as a merge: its
// proceeds C(q) - C(after) rounded down (sellProceeds), with its vig and
// prices. QuoteSell does the same inline, as QuoteBuy does quoteUp's.
func quoteDown(alpha float64, q, after [2]money.Amount) Quote {
	var c0, c1 curve
	c0.eval(alpha, q)
	c1.eval(alpha, after)
	return quote(alpha, &c0, &c1, sellProceeds(&c0, &c1), after)
}

// MinCollateral returns the least collateral a market at q may hold: C(q)
// rounded up after narrowing by the error bound of one evaluation, the
// smallest integer that is not certainly below the exact C(q). Every
// subsidy, buy and split rounds up after widening by a bound and every sell
// and merge rounds down after narrowing, so a market's collateral (less
// what it took in at par for sets held outside q) is at least the exact
// C(q); one under this value is a broken invariant, never a rounding of
// this evaluation. It panics if alpha or q is out of range.
func MinCollateral(alpha float64, q [2]money.Amount) money.Amount {
	mustState("MinCollateral", alpha, q)
	var c curve
	c.eval(alpha, q)
	return roundUp(c.m, c.g, -errBoundEps*eps*c.b)
}
