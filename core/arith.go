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

func (s *sums) add(a, b money.Amount) money.Amount {
	r, err := a.Add(b)
	s.keep(err)
	return r
}

func (s *sums) sub(a, b money.Amount) money.Amount {
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
	if r, err := a.Add(b); err == nil {
		return r
	}
	if b > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}
