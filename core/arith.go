package core

import (
	"errors"
	"fmt"
	"math"

	"marketd/core/money"
)

// sums does a run of checked money arithmetic and keeps the first error, so
// that an operation computes all its after-values and checks once, before it
// changes anything. A money total (a balance, the supply, a market's
// collateral) that would overflow is ErrTotalLimit: the operation is
// refused, never applied with a wrapped value (docs/API.md, "Totals").
type sums struct{ err error }

func (s *sums) keep(err error) {
	if err == nil || s.err != nil {
		return
	}
	if errors.Is(err, money.ErrOverflow) {
		err = fmt.Errorf("%w: %w", ErrTotalLimit, err)
	}
	s.err = err
}

// add and sub test for overflow themselves and leave money.Amount's Add
// and Sub, whose error they keep, to the overflow: a trade makes about a
// dozen of them, and the calls to Add, Sub and keep with the error
// interface were 580 of core's own 3,970 instructions per trade
// (cachegrind, TradeNoLog). The results, and the error kept, are those
// of Add and Sub (TestSumsAsAmountArithmetic). The overflow's path is a
// function of its own, out of line, so that add and sub inline into
// their callers: a call each was about 100 instructions of a trade
// (docs/PERFORMANCE.md, "The trade's own instructions").
func (s *sums) add(a, b money.Amount) (r money.Amount) {
	// Overflow: both operands share a sign that the sum lacks.
	if r = a + b; (r^a)&(r^b) < 0 {
		return s.addOverflow(a, b)
	}
	return
}

func (s *sums) sub(a, b money.Amount) (r money.Amount) {
	// Overflow: the operands' signs differ and the result lacks a's. Sub
	// refuses the smallest amount as b in every case, so any negative b
	// whose result changes a's sign takes the slow path too, which is
	// exact for all operands: a cheaper test than the two, and a trade's
	// b is never negative.
	if r = a - b; (a^b|b)&(a^r) < 0 {
		return s.subOverflow(a, b)
	}
	return
}

// addOverflow keeps the error of a.Add(b), which overflows, and returns
// 0 as Add does.
//
//go:noinline
func (s *sums) addOverflow(a, b money.Amount) money.Amount {
	r, err := a.Add(b)
	s.keep(err)
	return r
}

// subOverflow returns a.Sub(b) and keeps its error: 0 and the error
// when it overflows, as Sub.
//
//go:noinline
func (s *sums) subOverflow(a, b money.Amount) money.Amount {
	r, err := a.Sub(b)
	s.keep(err)
	return r
}

// mint returns minted + amount, the new minted total of a currency, and
// keeps ErrTotalLimit when the currency's money in circulation (minted less
// burned) would pass MaxSupply: every sum of balances, collateral, bonds and
// stakes is then far from an Amount's limit.
func (s *sums) mint(minted, burned, amount money.Amount) money.Amount {
	after := s.add(minted, amount)
	if circulating := s.sub(after, burned); s.err == nil && circulating > MaxSupply {
		s.err = fmt.Errorf("%w: %s in circulation past %s", ErrTotalLimit, circulating, MaxSupply)
	}
	return after
}

// share returns floor(a*num/den), or 0 with the error kept.
func (s *sums) share(a, num, den money.Amount) money.Amount {
	r, err := a.MulDivFloor(num, den)
	s.keep(err)
	return r
}

// addSigned adds two amounts, saturating at either end of int64 rather than
// wrapping: a display figure or a statistic summed over all time (volumes,
// payouts, profits) must never flip sign on overflow.
func addSigned(a, b money.Amount) money.Amount {
	if r := a + b; (r^a)&(r^b) >= 0 { // no overflow (sums.add)
		return r
	}
	if b > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}
