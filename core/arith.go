package core

import (
	"math"

	"marketd/core/money"
)

// sums does a run of checked money arithmetic and keeps the first error, so
// that an operation computes all its after-values and checks once, before it
// changes anything.
type sums struct{ err error }

func (s *sums) add(a, b money.Amount) money.Amount {
	r, err := a.Add(b)
	if err != nil && s.err == nil {
		s.err = err
	}
	return r
}

func (s *sums) sub(a, b money.Amount) money.Amount {
	r, err := a.Sub(b)
	if err != nil && s.err == nil {
		s.err = err
	}
	return r
}

// share returns floor(a*num/den), or 0 with the error kept.
func (s *sums) share(a, num, den money.Amount) money.Amount {
	r, err := a.MulDivFloor(num, den)
	if err != nil && s.err == nil {
		s.err = err
	}
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
