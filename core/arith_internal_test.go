package core

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"marketd/core/money"
)

// TestSumsRefuseOverflow: every way a money total can overflow keeps
// ErrTotalLimit (a 400 "Total limit exceeded", nothing applied), and
// statistics saturate instead.
func TestSumsRefuseOverflow(t *testing.T) {
	tests := []struct {
		name string
		run  func(s *sums)
	}{
		{"add past the largest amount", func(s *sums) { s.add(math.MaxInt64, 1) }},
		{"sub past the smallest amount", func(s *sums) { s.sub(math.MinInt64+1, 2) }},
		{"share past the largest amount", func(s *sums) { s.share(math.MaxInt64, 2, 1) }},
		{"mint past MaxSupply", func(s *sums) { s.mint(MaxSupply, 0, 1) }},
		{"mint past MaxSupply after burns", func(s *sums) { s.mint(MaxSupply+5, 5, 1) }},
	}
	for _, tt := range tests {
		var s sums
		tt.run(&s)
		if !errors.Is(s.err, ErrTotalLimit) {
			t.Errorf("%s: %v, want ErrTotalLimit", tt.name, s.err)
		}
	}
	var s sums
	if got := s.mint(MaxSupply-1, 0, 1); got != MaxSupply || s.err != nil {
		t.Errorf("mint up to MaxSupply: %s, %v", got, s.err)
	}
	if got := addSigned(MaxStatistic-1, 5); got != MaxStatistic {
		t.Errorf("a statistic past its bound: %d, want %d", got, MaxStatistic)
	}
	if got := addSigned(money.Units(1), money.Units(2)); got != money.Units(3) {
		t.Errorf("addSigned(1, 2) = %s", got)
	}
}

// TestSumsAsAmountArithmetic: sums.add, sums.sub and addSigned give the
// results of money.Amount's Add and Sub, keep their errors, and saturate
// where Add fails, over the edges of int64 and seeded random operands.
func TestSumsAsAmountArithmetic(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	edges := []money.Amount{math.MinInt64, math.MinInt64 + 1, -2, -1, 0, 1, 2, math.MaxInt64 - 1, math.MaxInt64,
		math.MaxInt64 / 2, math.MinInt64 / 2, math.MaxInt64/2 + 1, math.MinInt64/2 - 1}
	var pairs [][2]money.Amount
	for _, a := range edges {
		for _, b := range edges {
			pairs = append(pairs, [2]money.Amount{a, b})
		}
	}
	for range 10000 {
		pairs = append(pairs, [2]money.Amount{money.Amount(rng.Uint64()), money.Amount(rng.Uint64())},
			[2]money.Amount{money.Amount(rng.Int64N(1 << 40)), money.Amount(-rng.Int64N(1 << 40))})
	}
	for _, p := range pairs {
		a, b := p[0], p[1]
		for _, op := range []struct {
			name string
			sums func(*sums, money.Amount, money.Amount) money.Amount
			want func(money.Amount, money.Amount) (money.Amount, error)
		}{
			{"add", (*sums).add, money.Amount.Add},
			{"sub", (*sums).sub, money.Amount.Sub},
		} {
			var s sums
			got := op.sums(&s, a, b)
			want, werr := op.want(a, b)
			if got != want || (s.err == nil) != (werr == nil) || (werr != nil && (!errors.Is(s.err, ErrTotalLimit) || !strings.HasSuffix(s.err.Error(), werr.Error()))) {
				t.Fatalf("%s(%d, %d) = %d, %v; Amount gives %d, %v", op.name, a, b, got, s.err, want, werr)
			}
		}
		want, err := a.Add(b)
		if err != nil {
			want = math.MaxInt64
			if b < 0 {
				want = math.MinInt64
			}
		}
		if got := addSigned(a, b); got != want {
			t.Fatalf("addSigned(%d, %d) = %d, want %d", a, b, got, want)
		}
	}
}
