package pricing

import (
	"fmt"
	"math"

	"marketd/core/money"
)

// eps is the float64 machine epsilon, 2^-52: twice the unit roundoff.
const eps = 0x1p-52

// errBoundEps is the error bound of a trade's float part g' - g (g = b*L1 =
// C - m, see eval), in machine epsilons of b + b', the liquidity parameters of
// the two states the trade spans. The integer part m' - m is exact, so the
// bound need not grow with q itself, only with b.
//
// Why 8. With u = 2^-53, and since dg/db = L1 + r*pi_lo <= ln 2,
// dg/dd = -pi_lo, pi_lo <= 1/2 and r*pi_lo <= 0.279 (r = d/b), the error of
// one g is at most:
//
//	Q to float64, then alpha*Q: b off by 2u      2u*ln2*b     = 1.39u*b
//	d to float64: d off by u                     u*r*pi_lo*b  = 0.28u*b
//	d/b rounded: r off by u                      u*r*pi_lo*b  = 0.28u*b
//	exp: 1.47 ulp = 2.94u of t (measured, amd64) 2.94u*pi_lo*b = 1.47u*b
//	log1p: 1 ulp = 2u of L1 (measured 0.73 ulp)  2u*ln2*b     = 1.39u*b
//	b*L1 rounded: u of g                         u*ln2*b      = 0.69u*b
//
// so 5.5u*b per state. The subtraction g' - g and the addition of the bound
// add u*|g' - g| <= 0.69u*max(b, b') each. The total, 6.9u*(b+b') =
// 3.5*eps*(b+b'), is under half of 8*eps*(b+b'): the margin covers a libm on
// another architecture a little worse than amd64's. TestRandomTrades measures
// the real error against 50-digit references and prints the worst ratio:
// 0.063 of this bound, about 1u*(b+b'), over 600 trades across the range.
// The cost of the margin is nil in practice: at the default market (1000
// units a side) the bound is 3e-7 micro-units; at q = (1e16, 1e16) micro-units
// and alpha 1 it is 71 micro-units on a market of 2e10 units.
const errBoundEps = 8

// tradeBound is the error bound of g(to) - g(from), in micro-units.
func tradeBound(from, to *curve) float64 {
	return errBoundEps * eps * (from.b + to.b)
}

// roundUp returns the integer dm plus dg+bound rounded up: an amount the
// house receives, never less than the exact dm + dg when |error of dg| <=
// bound.
func roundUp(dm int64, dg, bound float64) money.Amount {
	x := math.Ceil(dg + bound)
	// In range |dg| <= max(g, g') < 2e16 and bound is far smaller, so this
	// only trips on a NaN or a broken evaluation.
	if !(math.Abs(x) < 1<<62) {
		panic(fmt.Sprintf("BUG: pricing: rounding %v + %v", dg, bound))
	}
	return money.Amount(dm + int64(x))
}

// roundDown returns the integer dm plus dg-bound rounded down: an amount the
// house pays, never more than the exact dm + dg when |error of dg| <= bound.
func roundDown(dm int64, dg, bound float64) money.Amount {
	x := math.Floor(dg - bound)
	if !(math.Abs(x) < 1<<62) {
		panic(fmt.Sprintf("BUG: pricing: rounding %v - %v", dg, bound))
	}
	return money.Amount(dm + int64(x))
}

// tradeInRange reports whether the state and the trade's side and share
// count are in range, in one branch that inlines into the quote; when
// they are not, tradeError says which.
func tradeInRange(alpha float64, q [2]money.Amount, side int, shares money.Amount) bool {
	return inRange(alpha, q) && uint(side) <= 1 && shares >= 1
}

// tradeError is the error of a trade not tradeInRange: the state's, else
// the side's, else the share count's.
//
//go:noinline
func tradeError(alpha float64, q [2]money.Amount, side int, shares money.Amount) error {
	if err := checkState(alpha, q); err != nil {
		return err
	}
	if side != 0 && side != 1 {
		return fmt.Errorf("%w: side %d", ErrOutOfRange, side)
	}
	return fmt.Errorf("%w: shares %d", ErrOutOfRange, shares)
}

// afterBuy returns q after buying shares of side, or ErrLiquidityLimit.
func afterBuy(alpha float64, q [2]money.Amount, side int, shares money.Amount) ([2]money.Amount, error) {
	if !tradeInRange(alpha, q, side, shares) {
		return q, tradeError(alpha, q, side, shares)
	}
	// Compared as MaxQ - q so that a huge share count cannot overflow.
	if shares > MaxQ-q[side] {
		return q, fmt.Errorf("%w: q[%d] = %d + %d shares > %d", ErrLiquidityLimit, side, q[side], shares, MaxQ)
	}
	q[side] += shares
	return q, nil
}

// afterSell returns q after selling shares of side; q[side] must stay >= 1.
func afterSell(alpha float64, q [2]money.Amount, side int, shares money.Amount) ([2]money.Amount, error) {
	if !tradeInRange(alpha, q, side, shares) {
		return q, tradeError(alpha, q, side, shares)
	}
	if shares >= q[side] {
		return q, fmt.Errorf("%w: selling %d shares from q[%d] = %d", ErrOutOfRange, shares, side, q[side])
	}
	q[side] -= shares
	return q, nil
}

// buyCost is C(after) - C(before) rounded up. A positive buy raises C, so a
// result below 1 micro-unit means the bound or the evaluation is wrong.
func buyCost(before, after *curve) money.Amount {
	cost := roundUp(after.m-before.m, after.g-before.g, tradeBound(before, after))
	if cost < 1 {
		panic(fmt.Sprintf("BUG: pricing: buy cost %d from %+v to %+v", cost, *before, *after))
	}
	return cost
}

// sellProceeds is C(before) - C(after) rounded down, and never below 0: the
// exact value is positive, so 0 only means it is under a micro-unit.
func sellProceeds(before, after *curve) money.Amount {
	return max(0, roundDown(before.m-after.m, before.g-after.g, tradeBound(before, after)))
}

// BuyCost returns what buying shares of side (0 yes, 1 no) costs at q:
// C(q + shares*e_side) - C(q), rounded up to a micro-unit after widening by
// the error bound; always at least 1. It returns ErrLiquidityLimit if q[side]
// would pass MaxQ, and ErrOutOfRange for arguments out of range.
func BuyCost(alpha float64, q [2]money.Amount, side int, shares money.Amount) (money.Amount, error) {
	after, err := afterBuy(alpha, q, side, shares)
	if err != nil {
		return 0, err
	}
	var c0, c1 curve
	c0.eval(alpha, q)
	c1.eval(alpha, after)
	return buyCost(&c0, &c1), nil
}

// SellProceeds returns what selling shares of side (0 yes, 1 no) pays at q:
// C(q) - C(q - shares*e_side), rounded down to a micro-unit after narrowing by
// the error bound, and never below 0. The caller keeps q[side] - shares >= 1
// (a market never sells below its initial q); otherwise, and for other
// arguments out of range, it returns ErrOutOfRange.
func SellProceeds(alpha float64, q [2]money.Amount, side int, shares money.Amount) (money.Amount, error) {
	after, err := afterSell(alpha, q, side, shares)
	if err != nil {
		return 0, err
	}
	var c0, c1 curve
	c0.eval(alpha, q)
	c1.eval(alpha, after)
	return sellProceeds(&c0, &c1), nil
}

// Subsidy returns C(q0, q0) rounded up: what the house moves into a new
// market's collateral when both sides start at q0. It is q0 + 2*alpha*q0*ln 2
// and, like a buy, rounds in the house's favour, so that with every trade
// also rounded so, a market's collateral never falls below C(q), which is at
// least max(q_yes, q_no). It panics if alpha or q0 is out of range, which
// validation of the market's fields rules out.
func Subsidy(alpha float64, q0 money.Amount) money.Amount {
	q := [2]money.Amount{q0, q0}
	mustState("Subsidy", alpha, q)
	var c curve
	c.eval(alpha, q)
	// One g and one addition, about 6.2u*b by the count at errBoundEps:
	// 8 eps of the one b covers it with the same margin as a trade's bound.
	return roundUp(c.m, c.g, errBoundEps*eps*c.b)
}

// Quote is one priced trade: what a market needs to check it against the
// trader's limits and balance, to apply it, and to publish its new prices.
type Quote struct {
	// Amount is a buy's cost, rounded up, or a sell's proceeds, rounded down.
	Amount money.Amount
	// Vig is Vig(Amount, PricesBefore[0], PricesBefore[1]).
	Vig money.Amount
	// PricesBefore are the marginal prices (yes, no) before the trade, at
	// which its vig is taken.
	PricesBefore [2]float64
	// PricesAfter are the marginal prices (yes, no) after the trade, what
	// Prices(alpha, QAfter) returns; the state after is evaluated anyway, so
	// they cost a division rather than another exp and log1p.
	PricesAfter [2]float64
	// QAfter is q after the trade.
	QAfter [2]money.Amount
}

// quote returns the Quote of a trade from the curves before and after it.
func quote(alpha float64, before, after *curve, amount money.Amount, qAfter [2]money.Amount) Quote {
	var qt Quote
	qt.fill(alpha, before, after, amount, qAfter)
	return qt
}

// fill sets every field of qt from the curves before and after a trade.
func (qt *Quote) fill(alpha float64, before, after *curve, amount money.Amount, qAfter [2]money.Amount) {
	qt.Amount, qt.QAfter = amount, qAfter
	qt.PricesBefore[0], qt.PricesBefore[1] = before.pricesYesNo(alpha)
	qt.PricesAfter[0], qt.PricesAfter[1] = after.pricesYesNo(alpha)
	qt.Vig = Vig(amount, qt.PricesBefore[0], qt.PricesBefore[1])
}

// fillPriced is fill from prices already taken (a Memo's entries, in side
// order): the same quote, bit for bit, since the prices are the same
// function of the same curves.
func (qt *Quote) fillPriced(amount money.Amount, qAfter [2]money.Amount, before, after *[2]float64) {
	qt.Amount, qt.QAfter = amount, qAfter
	qt.PricesBefore, qt.PricesAfter = *before, *after
	qt.Vig = Vig(amount, before[0], before[1])
}

// QuoteBuy prices a buy of shares of side at q in one pass: BuyCost, its
// vig, the prices before and after it and the new q. It evaluates the curve
// once per state and allocates nothing. Errors are those of BuyCost.
func QuoteBuy(alpha float64, q [2]money.Amount, side int, shares money.Amount) (Quote, error) {
	after, err := afterBuy(alpha, q, side, shares)
	if err != nil {
		return Quote{}, err
	}
	var c0, c1 curve
	c0.eval(alpha, q)
	c1.eval(alpha, after)
	return quote(alpha, &c0, &c1, buyCost(&c0, &c1), after), nil
}

// QuoteSell prices a sell of shares of side at q in one pass: SellProceeds,
// its vig, the prices before and after it and the new q. It evaluates the
// curve once per state and allocates nothing. Errors are those of
// SellProceeds.
func QuoteSell(alpha float64, q [2]money.Amount, side int, shares money.Amount) (Quote, error) {
	after, err := afterSell(alpha, q, side, shares)
	if err != nil {
		return Quote{}, err
	}
	var c0, c1 curve
	c0.eval(alpha, q)
	c1.eval(alpha, after)
	return quote(alpha, &c0, &c1, sellProceeds(&c0, &c1), after), nil
}
