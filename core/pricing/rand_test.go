package pricing

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"marketd/core/money"
)

var seedFlag = flag.Uint64("seed", 20261122, "seed of the property tests' PCG; 0 picks one from the clock")

// newRand returns a PCG seeded from -seed (fixed by default, so that CI is
// reproducible; -seed=0 draws one from the clock), and prints the seed
// on failure so that the run can be repeated.
func newRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d", seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("failed with seed %d: rerun with -seed=%d", seed, seed)
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// logUniform returns an integer in [lo, hi], log-uniformly distributed so
// that every order of magnitude is tried as often.
func logUniform(r *rand.Rand, lo, hi money.Amount) money.Amount {
	if hi <= lo {
		return lo
	}
	l, h := math.Log(float64(lo)), math.Log(float64(hi))
	v := money.Amount(math.Round(math.Exp(l + r.Float64()*(h-l))))
	return min(max(v, lo), hi)
}

// randAlpha returns an alpha in range, often at either end.
func randAlpha(r *rand.Rand) float64 {
	switch r.IntN(8) {
	case 0:
		return MinAlpha
	case 1:
		return MaxAlpha
	}
	return MinAlpha * math.Pow(MaxAlpha/MinAlpha, r.Float64())
}

// randQ returns one side of a state, often at an edge: 1 micro-unit, MaxQ,
// or around 2^53 where the int64 to float64 conversion starts to round.
func randQ(r *rand.Rand) money.Amount {
	switch r.IntN(10) {
	case 0:
		return 1 + money.Amount(r.IntN(3))
	case 1:
		return MaxQ - money.Amount(r.IntN(3))
	case 2:
		return 1<<53 - 2 + money.Amount(r.IntN(5))
	}
	return logUniform(r, 1, MaxQ)
}

// randState returns a state in range: a fifth with equal sides, a fifth at
// the most extreme imbalance (MaxQ against 1), a fifth strongly imbalanced.
func randState(r *rand.Rand) (float64, [2]money.Amount) {
	alpha := randAlpha(r)
	q := [2]money.Amount{randQ(r), randQ(r)}
	switch r.IntN(5) {
	case 0:
		q[1] = q[0]
	case 1:
		q = [2]money.Amount{MaxQ - money.Amount(r.IntN(2)), 1 + money.Amount(r.IntN(2))}
	case 2:
		q = [2]money.Amount{logUniform(r, 1e12, MaxQ), logUniform(r, 1, 1e6)}
	}
	if r.IntN(2) == 0 {
		q[0], q[1] = q[1], q[0]
	}
	return alpha, q
}
