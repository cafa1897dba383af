package pricing

import (
	"errors"
	"fmt"
	"math"

	"marketd/core/money"
)

// MaxQ is the largest value q_yes or q_no may reach: 1e10 units, in
// micro-units (1e16, beyond 2^53, so its float64 conversions round).
const MaxQ money.Amount = 10_000_000_000 * money.Scale

// The range of a market's alpha, its liquidity sensitivity: the overround
// v = 2*alpha*ln 2 goes from about 0.28% to about 139%.
const (
	// MinAlpha is the smallest alpha. It keeps d/b <= 1/alpha = 500, so
	// exp(-d/b) >= 7e-218 never underflows and exp(q/b) never overflows.
	MinAlpha = 0.002
	// MaxAlpha is the largest alpha.
	MaxAlpha = 1.0
)

// ErrLiquidityLimit reports a buy that would take q_yes or q_no past MaxQ.
var ErrLiquidityLimit = errors.New("pricing: market liquidity limit")

// ErrOutOfRange reports an argument the caller should have kept in range: an
// alpha outside [MinAlpha, MaxAlpha], a q outside [1, MaxQ], a side other
// than 0 or 1, a non-positive share count, or a sell that would take q to 0.
var ErrOutOfRange = errors.New("pricing: argument out of range")

// curve is the LS-LMSR evaluated at one q: what Cost, Prices and the trade
// functions share, so that a quote evaluates exp and log1p once per state.
type curve struct {
	m  int64   // max(q_yes, q_no), exact
	d  int64   // |q_yes - q_no|, exact
	hi int     // index of the larger side; 0 on a tie, where the prices are equal
	q  float64 // q_yes + q_no, rounded to float64
	b  float64 // alpha*Q
	r  float64 // d/b, in [0, 1/alpha]
	t  float64 // exp(-r), in (0, 1]
	l1 float64 // log1p(t), in (0, ln 2]
	g  float64 // b*l1 = C(q) - m, > 0
}

// eval evaluates the curve at q, which the caller has checked to be in range,
// into c. It fills a curve the caller owns rather than returning one because
// copying the 64-byte result out and in again was 15% of Cost + Prices.
// m and d are exact in int64 (both sides are at most MaxQ, so no sum
// overflows); only Q and d are converted to float64, so the error of g is
// relative to b alone, never to m (see errBoundEps).
func (c *curve) eval(alpha float64, q [2]money.Amount) {
	y, n := int64(q[0]), int64(q[1])
	c.m, c.d, c.hi = y, y-n, 0
	if n > y {
		c.m, c.d, c.hi = n, n-y, 1
	}
	c.q = float64(y + n)
	c.b = alpha * c.q
	c.r = float64(c.d) / c.b
	c.t = math.Exp(-c.r)
	c.l1 = math.Log1p(c.t)
	c.g = c.b * c.l1
}

// eval returns the curve at q; for tests and cold paths.
func eval(alpha float64, q [2]money.Amount) curve {
	var c curve
	c.eval(alpha, q)
	return c
}

// prices returns the marginal prices of the larger and the smaller side,
// from the stable form in the package comment: all terms non-negative.
// d/Q is taken as r*alpha, which saves a division and is as accurate (a few
// ulps) as the prices need.
func (c *curve) prices(alpha float64) (hi, lo float64) {
	piHi := 1 / (1 + c.t)
	piLo := c.t * piHi
	common := piLo*(c.r*alpha) + alpha*c.l1
	return piHi + common, piLo + common
}

// pricesYesNo returns the marginal prices in side order.
func (c *curve) pricesYesNo(alpha float64) (yes, no float64) {
	hi, lo := c.prices(alpha)
	if c.hi == 0 {
		return hi, lo
	}
	return lo, hi
}

// inRange reports whether alpha and q are in range, in one branch for the
// hot path; a NaN alpha fails too. The unsigned compare of v-1 checks
// 1 <= v <= MaxQ at once.
func inRange(alpha float64, q [2]money.Amount) bool {
	return alpha >= MinAlpha && alpha <= MaxAlpha &&
		uint64(q[0]-1) < uint64(MaxQ) && uint64(q[1]-1) < uint64(MaxQ)
}

// checkState returns nil if alpha and q are in range, else an error saying
// which is not.
func checkState(alpha float64, q [2]money.Amount) error {
	if inRange(alpha, q) {
		return nil
	}
	return stateError(alpha, q)
}

// stateError describes why alpha or q is out of range; kept out of line so
// that the checks inline into the hot path.
//
//go:noinline
func stateError(alpha float64, q [2]money.Amount) error {
	if !(alpha >= MinAlpha && alpha <= MaxAlpha) {
		return fmt.Errorf("%w: alpha %v not in [%v, %v]", ErrOutOfRange, alpha, MinAlpha, MaxAlpha)
	}
	for i, v := range q {
		if v < 1 || v > MaxQ {
			return fmt.Errorf("%w: q[%d] = %d not in [1, %d]", ErrOutOfRange, i, v, MaxQ)
		}
	}
	return fmt.Errorf("%w: alpha %v q %v", ErrOutOfRange, alpha, q) // unreachable: inRange disagreed
}

// mustState panics when alpha and q are out of range: the functions without
// an error result are only called on a market's own state, which the market
// keeps in range. Small enough to inline; the panic is out of line.
func mustState(fn string, alpha float64, q [2]money.Amount) {
	if !inRange(alpha, q) {
		panicState(fn, alpha, q)
	}
}

// panicState panics with a BUG message naming fn and the bad state.
//
//go:noinline
func panicState(fn string, alpha float64, q [2]money.Amount) {
	panic(fmt.Sprintf("BUG: pricing.%s(%v, %v): %v", fn, alpha, q, stateError(alpha, q)))
}

// Cost returns C(q) in micro-units, the LS-LMSR cost function at q, as a
// float64 (not rounded to micro-units; beyond 2^53 its last bits are lost).
// It panics if alpha or q is out of range.
func Cost(alpha float64, q [2]money.Amount) float64 {
	mustState("Cost", alpha, q)
	var c curve
	c.eval(alpha, q)
	return float64(c.m) + c.g
}

// Prices returns the marginal prices dC/dq_yes and dC/dq_no at q. Both are
// > 0 and their sum is in [1, 1+2*alpha*ln 2] (up to a few ulps). It panics if
// alpha or q is out of range.
func Prices(alpha float64, q [2]money.Amount) (yes, no float64) {
	mustState("Prices", alpha, q)
	var c curve
	c.eval(alpha, q)
	return c.pricesYesNo(alpha)
}
