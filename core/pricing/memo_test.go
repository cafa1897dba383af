package pricing

import (
	"errors"
	"testing"

	"marketd/core/money"
)

// TestMemoQuotesAsThePlainFunctions walks random states with random buys
// and sells, some of them not applied (as a refused trade), quoting each
// through one Memo and through QuoteBuy or QuoteSell: the quotes and the
// errors must be the same, bit for bit.
func TestMemoQuotesAsThePlainFunctions(t *testing.T) {
	r := newRand(t)
	var memo Memo
	for range 200 {
		alpha, q := randState(r)
		for range 50 {
			side := r.IntN(2)
			shares := logUniform(r, 1, max(q[side], 2))
			sell := r.IntN(2) == 0
			var got, want Quote
			var gotErr, wantErr error
			if sell {
				gotErr = memo.QuoteSell(&got, alpha, q, side, shares)
				want, wantErr = QuoteSell(alpha, q, side, shares)
			} else {
				gotErr = memo.QuoteBuy(&got, alpha, q, side, shares)
				want, wantErr = QuoteBuy(alpha, q, side, shares)
			}
			sameErr := (gotErr == nil) == (wantErr == nil) &&
				errors.Is(gotErr, ErrOutOfRange) == errors.Is(wantErr, ErrOutOfRange) &&
				errors.Is(gotErr, ErrLiquidityLimit) == errors.Is(wantErr, ErrLiquidityLimit)
			if got != want || !sameErr {
				t.Fatalf("alpha %v q %v side %d shares %d sell %v: memo %+v, %v; plain %+v, %v",
					alpha, q, side, shares, sell, got, gotErr, want, wantErr)
			}
			if wantErr == nil && (!memo.holds(alpha, q) || !memo.holds(alpha, want.QAfter)) {
				t.Fatalf("alpha %v: after a quote from %v to %v the memo holds %+v", alpha, q, want.QAfter, memo.ents)
			}
			if wantErr == nil && r.IntN(4) != 0 {
				q = want.QAfter // applied; otherwise refused, q stays
			}
		}
	}
	var nilMemo *Memo
	q := [2]money.Amount{1_000_000_000, 1_000_000_000}
	var got Quote
	if err := nilMemo.QuoteBuy(&got, 0.05, q, 0, 1_000_000); err != nil || got != mustQuoteBuy(t, 0.05, q, 0, 1_000_000) {
		t.Fatalf("a nil memo quotes %+v", got)
	}
}

// holds reports whether the memo keeps the curve at (alpha, q).
func (m *Memo) holds(alpha float64, q [2]money.Amount) bool {
	for _, e := range m.ents {
		if e.alpha == alpha && e.q == q {
			return true
		}
	}
	return false
}

func mustQuoteBuy(t *testing.T, alpha float64, q [2]money.Amount, side int, shares money.Amount) Quote {
	t.Helper()
	qt, err := QuoteBuy(alpha, q, side, shares)
	if err != nil {
		t.Fatal(err)
	}
	return qt
}
