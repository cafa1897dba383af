// Package pricing provides the two-outcome liquidity-sensitive LMSR of
// Othman, Pennock, Reeves and Sandholm (2013): the cost function, the
// marginal prices, the rounded cost of a trade and of a complete set (split
// and merge), a market's subsidy, the least collateral a state needs
// (MinCollateral) and the vig of a trade.
//
// # Units
//
// All quantities are in micro-units. The cost function is homogeneous of
// degree 1 (C(kq) = k C(q)), so evaluating it on micro-units rather than on
// whole units is an exact change of scale, and share counts and money share
// one integer type, money.Amount. Sides are indices: 0 is yes, 1 is no (the
// values of core.Side, which this package cannot import).
//
// # Formulas
//
// For q = (q_yes, q_no) with both > 0, Q = q_yes + q_no and b = alpha*Q,
//
//	C(q) = b * ln(exp(q_yes/b) + exp(q_no/b)).
//
// It is evaluated in a form that neither overflows nor cancels. With
// m = max(q_yes, q_no), d = |q_yes - q_no|, t = exp(-d/b) in (0, 1] and
// L1 = log1p(t) in (0, ln 2],
//
//	C(q) = m + b*L1.
//
// The marginal prices p_i = dC/dq_i = alpha*ln S + pi_i - (q_yes*pi_yes +
// q_no*pi_no)/Q, where pi_i = exp(q_i/b)/S and S is the sum of the
// exponentials, become, with pi_hi = 1/(1+t) for the larger side and
// pi_lo = t/(1+t) for the smaller,
//
//	p_hi = pi_hi + pi_lo*d/Q + alpha*L1
//	p_lo = pi_lo + pi_lo*d/Q + alpha*L1.
//
// Every term is non-negative, so nothing cancels and both prices are > 0.
// Their sum 1 + 2*alpha*(r*pi_lo + L1), with r = d/b, decreases in r from
// 1 + v at r = 0 towards 1, where v = 2*alpha*ln 2: the LS-LMSR overround.
// In range (alpha >= 0.002, d < Q) r is at most 1/alpha = 500, so t is at
// least exp(-500) ~ 7e-218 and never underflows.
//
// # Rounding
//
// Money is exact integers; only this package computes in float64, and its
// results are rounded so that the house never pays for rounding: a buy's cost
// C(q + n e_side) - C(q) rounds up, a sell's proceeds C(q) - C(q - n e_side)
// round down (never below 0), the subsidy C(q0, q0) rounds up and the vig
// rounds down. The vig, amount*(1 - 1/(p_yes + p_no)), is computed exactly in
// integers from the sum of the prices taken at the float64 at or below it.
//
// A trade's value is split into an integer part, the change of m, computed
// exactly in int64, and a float part, the change of b*L1. Before rounding, the
// float part is widened (for a buy) or narrowed (for a sell) by an error bound
// relative to the size of its operands, 8 machine epsilons of b + b' (the
// derivation is at errBoundEps), never by a fixed epsilon. So small markets, where the bound is
// far below a micro-unit, round exactly (a value lands one micro-unit further
// only when it lies within the bound of an integer), and huge ones, where
// q > 2^53 and even the int64 to float64 conversion rounds, never round
// against the house.
//
// # Limits
//
// alpha is in [MinAlpha, MaxAlpha]; q_yes and q_no are in [1, MaxQ]. A buy
// that would take q past MaxQ fails with ErrLiquidityLimit; the trade
// functions report other arguments out of range with ErrOutOfRange. Cost,
// Prices and Subsidy, which return no error, panic on a state out of range
// (and Vig on prices that are NaN or sum to 4 or more): the market owning
// the state keeps it in range, so only a bug can get there.
//
// QuoteBuy and QuoteSell price a trade for the trade path in one pass: amount,
// vig, prices before and after, and the new q, with one evaluation per state.
//
// Nothing here allocates or keeps state; every function is safe to call from
// any goroutine.
package pricing
