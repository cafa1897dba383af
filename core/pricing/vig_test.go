package pricing

import (
	"math"
	"math/big"
	"testing"

	"marketd/core/money"
)

// exactVig is floor(amount * (1 - 1/(pYes+pNo))) in exact rationals.
func exactVig(amount money.Amount, pYes, pNo float64) money.Amount {
	s := new(big.Rat).Add(new(big.Rat).SetFloat64(pYes), new(big.Rat).SetFloat64(pNo))
	if s.Cmp(big.NewRat(1, 1)) <= 0 || amount <= 0 {
		return 0
	}
	frac := new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Inv(s))
	v := new(big.Rat).Mul(frac, new(big.Rat).SetInt64(int64(amount)))
	return money.Amount(new(big.Int).Quo(v.Num(), v.Denom()).Int64()) // both > 0: Quo is floor
}

func TestVig(t *testing.T) {
	tests := []struct {
		name     string
		amount   money.Amount
		yes, no  float64
		want     money.Amount
		wantNote string
	}{
		{"sum 1.25 exact", 1_000_000, 0.75, 0.5, 200_000, "exact integer results are kept"},
		{"sum exactly 1", 1_000_000, 0.5, 0.5, 0, ""},
		{"sum below 1", 1_000_000, 0.5, 0.5 - 0x1p-53, 0, "Prices may sum a few ulps under 1"},
		{"zero amount", 0, 0.75, 0.5, 0, ""},
		{"negative amount", -5, 0.75, 0.5, 0, ""},
		{"default market", 1_000_000, 0.525, 0.525, 47_619, "1e6 * 0.05/1.05 = 47619.04"},
		{"max alpha", 1_000_000, 0.5 + math.Ln2, 0.5 + math.Ln2, 580_940, "1e6 * (1 - 1/(1+2 ln 2)) = 580940.6"},
		{"huge amount", 1 << 62, 0.75, 0.5, 1 << 62 / 5, "exact with no float rounding of the amount"},
		{"one micro", 1, 0.75, 0.5, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Vig(tc.amount, tc.yes, tc.no); got != tc.want {
				t.Errorf("Vig(%d, %v, %v) = %d, want %d (%s)", tc.amount, tc.yes, tc.no, got, tc.want, tc.wantNote)
			}
		})
	}
}

func TestVigPanicsOnBadPrices(t *testing.T) {
	for _, p := range []float64{math.NaN(), math.Inf(1), 3.5} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Vig(1, %v, 0.5) did not panic", p)
				}
			}()
			Vig(1, p, 0.5)
		}()
	}
}

// TestVigExact checks Vig against exact rationals on random amounts and on
// the prices of random states, plus sums right at the float steps.
func TestVigExact(t *testing.T) {
	r := newRand(t)
	under := 0
	for i := 0; i < 20000; i++ {
		alpha, q := randState(r)
		yes, no := Prices(alpha, q)
		if i%4 == 0 { // sums an ulp or two off a round value
			yes, no = 0.5+float64(r.IntN(3))*0x1p-53, 0.5+float64(r.IntN(3)+1)*0x1p-52
		}
		amount := logUniform(r, 1, 3*MaxQ)
		got, want := Vig(amount, yes, no), exactVig(amount, yes, no)
		// Exact but for the sum rounded down to a float64, which is at most
		// an ulp (2^-52 of s in [1, 2), 2^-51 in [2, 4)) under the exact
		// sum and so takes at most amount*2^-52 off; then floor.
		slack := money.Amount(float64(amount)*0x1p-52) + 1
		if got > want || got < want-slack || got < 0 || got > amount {
			t.Fatalf("Vig(%d, %v, %v) = %d, exact %d", amount, yes, no, got, want)
		}
		if got != want {
			under++
		}
	}
	t.Logf("%d of 20000 under the exact vig", under)
}

// vigFrexp is Vig as it was written with math.Frexp, before Vig read the
// significand and exponent from the sum's bits.
func vigFrexp(amount money.Amount, pYes, pNo float64) money.Amount {
	s := pYes + pNo
	if amount <= 0 || s <= 1 {
		return 0
	}
	if bv := s - pYes; (pYes-(s-bv))+(pNo-bv) < 0 {
		if s = math.Nextafter(s, 0); s <= 1 {
			return 0
		}
	}
	frac, exp := math.Frexp(s)
	mant := int64(frac * (1 << 53))
	one := int64(1) << (53 - exp)
	v, err := amount.MulDivFloor(money.Amount(mant-one), money.Amount(mant))
	if err != nil {
		panic(err)
	}
	return v
}

// TestVigAsFrexp: Vig gives what its form with math.Frexp gave, bit for
// bit, on prices summing anywhere in (1, 4), at the steps 2 and the
// float64s next to 1, 2 and 4.
func TestVigAsFrexp(t *testing.T) {
	r := newRand(t)
	edges := []float64{1, math.Nextafter(1, 2), 2, math.Nextafter(2, 0), math.Nextafter(2, 4), math.Nextafter(4, 0)}
	for i := 0; i < 100000; i++ {
		var yes, no float64
		if i < len(edges) {
			yes, no = edges[i]/2, edges[i]/2
		} else {
			s := 1 + 3*r.Float64()
			yes = s * r.Float64()
			no = s - yes
		}
		amount := logUniform(r, 1, 3*MaxQ)
		if got, want := Vig(amount, yes, no), vigFrexp(amount, yes, no); got != want {
			t.Fatalf("Vig(%d, %v, %v) = %d, with Frexp %d", amount, yes, no, got, want)
		}
	}
}
