package pricing

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"marketd/core/money"
)

// TestSetQuotes checks a split and a merge of complete sets against their
// definitions on random states: a split of n costs at least n times the
// lower price sum at its ends and at most n times the higher (the curve is
// convex), a merge of the same sets straight back pays no more than the split
// cost, and the collateral a market needs never exceeds a subsidy or a
// reserve rounded up.
func TestSetQuotes(t *testing.T) {
	const seed = 0x5e75
	r := rand.New(rand.NewPCG(seed, seed))
	const n = 20_000
	for i := range n {
		alpha := MinAlpha * math.Pow(MaxAlpha/MinAlpha, r.Float64())
		q := [2]money.Amount{money.Amount(math.Pow(10, 1+r.Float64()*14)), money.Amount(math.Pow(10, 1+r.Float64()*14))}
		sets := money.Amount(math.Pow(10, r.Float64()*14)) + 1
		sp, err := QuoteSplit(alpha, q, sets)
		if errors.Is(err, ErrLiquidityLimit) {
			continue
		}
		if err != nil {
			t.Fatalf("seed %#x case %d: QuoteSplit(%v, %v, %d): %v", seed, i, alpha, q, sets, err)
		}
		mg, err := QuoteMerge(alpha, sp.QAfter, sets)
		if err != nil {
			t.Fatalf("seed %#x case %d: QuoteMerge(%v, %v, %d): %v", seed, i, alpha, sp.QAfter, sets, err)
		}
		lo := float64(sets) * (sp.PricesBefore[0] + sp.PricesBefore[1])
		hi := float64(sets) * (sp.PricesAfter[0] + sp.PricesAfter[1])
		// Give or take the rounding, widened by the trade's error bound.
		c0, c1 := eval(alpha, q), eval(alpha, sp.QAfter)
		slack := 2 + 2*tradeBound(&c0, &c1)
		lo, hi = math.Min(lo, hi)*(1-1e-12)-slack, math.Max(lo, hi)*(1+1e-12)+slack
		switch c := float64(sp.Amount); {
		case sp.Amount < sets:
			t.Fatalf("seed %#x case %d: split of %d sets at %v costs %d, under par", seed, i, sets, q, sp.Amount)
		case c < lo || c > hi:
			t.Fatalf("seed %#x case %d: split of %d sets at %v costs %d, want between %v and %v", seed, i, sets, q, sp.Amount, lo, hi)
		case mg.Amount > sp.Amount:
			t.Fatalf("seed %#x case %d: split of %d at %v cost %d, merging them back pays %d", seed, i, sets, q, sp.Amount, mg.Amount)
		case mg.QAfter != q:
			t.Fatalf("seed %#x case %d: q %v after a split and a merge of %d from %v", seed, i, mg.QAfter, sets, q)
		case MinCollateral(alpha, q) > Reserve(alpha, q):
			t.Fatalf("seed %#x case %d: MinCollateral above C(q) rounded up", seed, i)
		}
	}
	t.Logf("%d random split and merge pairs, seed %#x", n, seed)
}

func TestSetQuoteErrors(t *testing.T) {
	q := [2]money.Amount{1000, 2000}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"split past MaxQ", errOf(QuoteSplit(0.1, [2]money.Amount{MaxQ, 1}, 1)), ErrLiquidityLimit},
		{"split of 0", errOf(QuoteSplit(0.1, q, 0)), ErrOutOfRange},
		{"split with a bad alpha", errOf(QuoteSplit(0, q, 1)), ErrOutOfRange},
		{"merge to 0", errOf(QuoteMerge(0.1, q, 1000)), ErrOutOfRange},
		{"merge of 0", errOf(QuoteMerge(0.1, q, 0)), ErrOutOfRange},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	if s, m := Subsidy(0.1, 1000), MinCollateral(0.1, [2]money.Amount{1000, 1000}); m > s {
		t.Errorf("MinCollateral at q0 %d above the subsidy %d", m, s)
	}
}

func errOf(_ Quote, err error) error { return err }

// Reserve is C(q) rounded up after widening, for the test above.
func Reserve(alpha float64, q [2]money.Amount) money.Amount {
	var c curve
	c.eval(alpha, q)
	return roundUp(c.m, c.g, errBoundEps*eps*c.b)
}
