package core

import (
	"errors"
	"math"
	"testing"

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
