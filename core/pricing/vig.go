package pricing

import (
	"fmt"
	"math"

	"marketd/core/money"
)

// Vig returns the vig of a trade whose cost (a buy's, paid) or proceeds (a
// sell's, received) is amount, at the pre-trade prices pYes and pNo:
// floor(amount * (1 - 1/(pYes+pNo))), the share of amount that the LS-LMSR
// overround brings the house. The result is in [0, amount): 0 for a
// non-positive amount or prices summing to 1 or less (Prices' sum can fall a
// few ulps under 1 where the exact one is 1).
//
// It is exact but for one rounding, in the house's favour: the sum of the
// prices is taken as the float64 at or below the exact sum (an ulp under it at
// most), and the rest is exact integer arithmetic. So the result never
// exceeds the exact vig and is at most 1 + amount*2^-52 under it: exact, or
// one micro-unit under, for any amount below 2^52 micro-units (4.5e9 units).
//
// It panics on prices summing to NaN, to infinity or to 4 or more; Prices'
// sum is below 1 + 2 ln 2 < 2.39.
func Vig(amount money.Amount, pYes, pNo float64) money.Amount {
	s := pYes + pNo
	if !(s < 4) {
		panic(fmt.Sprintf("BUG: pricing.Vig(%d, %v, %v): prices sum to %v", amount, pYes, pNo, s))
	}
	if amount <= 0 || s <= 1 {
		return 0
	}
	// TwoSum (Knuth): rounding error of s, exactly. Where s rounded up,
	// step to the float below, which is below the exact sum: a smaller sum
	// means a smaller vig.
	bv := s - pYes
	if (pYes-(s-bv))+(pNo-bv) < 0 {
		s = math.Nextafter(s, 0)
		if s <= 1 {
			return 0
		}
	}
	// s = mant * 2^(exp-53) with a 53-bit integer mant; for s in (1, 4),
	// exp is 1 or 2 and 1 = 2^(53-exp) in the same scale, so
	// 1 - 1/s = (mant - 2^(53-exp)) / mant, a ratio of integers. mant and
	// exp are read from s's bits, as math.Frexp would give them (s is
	// normal): the 52 stored bits of the significand with the implicit
	// one, and the biased exponent less 1022.
	b := math.Float64bits(s)
	mant := int64(b&(1<<52-1) | 1<<52)
	exp := int(b>>52&0x7ff) - 1022
	one := int64(1) << (53 - exp)
	v, err := amount.MulDivFloor(money.Amount(mant-one), money.Amount(mant))
	if err != nil {
		// num < den, so the product always fits: only a bug gets here.
		panic(fmt.Sprintf("BUG: pricing.Vig(%d, %v, %v): %v", amount, pYes, pNo, err))
	}
	return v
}
