package pricing

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"marketd/core/money"
)

func TestTradeErrors(t *testing.T) {
	ok := [2]money.Amount{1e9, 1e9}
	tests := []struct {
		name   string
		alpha  float64
		q      [2]money.Amount
		side   int
		sell   bool
		shares money.Amount
		want   error
	}{
		{"buy to exactly MaxQ", 0.1, [2]money.Amount{MaxQ - 5, 1}, 0, false, 5, nil},
		{"buy one past MaxQ", 0.1, [2]money.Amount{MaxQ - 5, 1}, 0, false, 6, ErrLiquidityLimit},
		{"buy at MaxQ", 0.1, [2]money.Amount{1, MaxQ}, 1, false, 1, ErrLiquidityLimit},
		{"buy MaxInt64 shares", 0.1, ok, 0, false, math.MaxInt64, ErrLiquidityLimit},
		{"buy zero shares", 0.1, ok, 0, false, 0, ErrOutOfRange},
		{"buy negative shares", 0.1, ok, 1, false, -1, ErrOutOfRange},
		{"buy side 2", 0.1, ok, 2, false, 1, ErrOutOfRange},
		{"buy side -1", 0.1, ok, -1, false, 1, ErrOutOfRange},
		{"buy alpha too small", 0.0019, ok, 0, false, 1, ErrOutOfRange},
		{"buy alpha NaN", math.NaN(), ok, 0, false, 1, ErrOutOfRange},
		{"buy q zero", 0.1, [2]money.Amount{0, 1}, 1, false, 1, ErrOutOfRange},
		{"buy q past MaxQ", 0.1, [2]money.Amount{1, MaxQ + 1}, 0, false, 1, ErrOutOfRange},
		{"sell to 1", 0.1, ok, 0, true, 1e9 - 1, nil},
		{"sell to 0", 0.1, ok, 0, true, 1e9, ErrOutOfRange},
		{"sell past 0", 0.1, ok, 1, true, 2e9, ErrOutOfRange},
		{"sell zero shares", 0.1, ok, 1, true, 0, ErrOutOfRange},
		{"sell alpha too large", 1.01, ok, 1, true, 1, ErrOutOfRange},
		{"sell side 3", 0.1, ok, 3, true, 1, ErrOutOfRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err, qerr error
			if tc.sell {
				_, err = SellProceeds(tc.alpha, tc.q, tc.side, tc.shares)
				_, qerr = QuoteSell(tc.alpha, tc.q, tc.side, tc.shares)
			} else {
				_, err = BuyCost(tc.alpha, tc.q, tc.side, tc.shares)
				_, qerr = QuoteBuy(tc.alpha, tc.q, tc.side, tc.shares)
			}
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Errorf("alpha %v q %v side %d sell %v shares %d: error %v, want %v", tc.alpha, tc.q, tc.side, tc.sell, tc.shares, err, tc.want)
			}
			if !errors.Is(qerr, tc.want) || (qerr == nil) != (tc.want == nil) {
				t.Errorf("quote: alpha %v q %v side %d sell %v shares %d: error %v, want %v", tc.alpha, tc.q, tc.side, tc.sell, tc.shares, qerr, tc.want)
			}
		})
	}
}

// TestTradeExamples pins rounding at the edges, where the exact value is
// known in closed form.
func TestTradeExamples(t *testing.T) {
	extreme := [2]money.Amount{MaxQ, 1} // alpha 0.002: prices 1 and 1.4e-217
	tests := []struct {
		name   string
		alpha  float64
		q      [2]money.Amount
		side   int
		sell   bool
		shares money.Amount
		want   money.Amount
	}{
		// Buying one micro-unit at a price of 1 + 1e-217 costs 2: the
		// exact value is above 1, and a buy never rounds down.
		{"buy certain side one micro", MinAlpha, [2]money.Amount{MaxQ - 1, 1}, 0, false, 1, 2},
		// At a price of 1e-217 one micro-unit still costs 1.
		{"buy hopeless side one micro", MinAlpha, extreme, 1, false, 1, 1},
		// And selling either back pays 0: the exact values are under 1.
		{"sell certain side one micro", MinAlpha, extreme, 0, true, 1, 0},
		{"sell hopeless side one micro", MinAlpha, [2]money.Amount{MaxQ, 2}, 1, true, 1, 0},
		// Equal sides, alpha 1, q = (1, 1): C(2, 1) - C(1, 1) = 3 ln(e^(2/3)
		// + e^(1/3)) - 2(1 + ln 2) = 1.3386..., so 2.
		{"buy tiny market", 1, [2]money.Amount{1, 1}, 0, false, 1, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got money.Amount
			var err error
			if tc.sell {
				got, err = SellProceeds(tc.alpha, tc.q, tc.side, tc.shares)
			} else {
				got, err = BuyCost(tc.alpha, tc.q, tc.side, tc.shares)
			}
			if err != nil || got != tc.want {
				t.Errorf("alpha %v q %v side %d sell %v shares %d = %d, %v; want %d", tc.alpha, tc.q, tc.side, tc.sell, tc.shares, got, err, tc.want)
			}
		})
	}
}

// TestSubsidy checks Subsidy against exact values of C(q0, q0) from
// testdata/reference.py: at least the exact value, and at most its ceiling
// after the float error and the widening (2 bounds), which is the ceiling
// itself in small markets.
func TestSubsidy(t *testing.T) {
	tests := []struct {
		name  string
		alpha float64
		q0    money.Amount
		exact string
		want  money.Amount // where the bound is far below a micro-unit
	}{
		// 0.05/(2 ln 2) as a float64 is a little above the real number, so
		// C is not 1.05e9 but a little more, and rounds up one micro-unit.
		{"default market", 0.05 / (2 * math.Ln2), 1000 * money.Scale, "1050000000.000000005066149664684853136104", 1_050_000_001},
		{"one micro-unit", MinAlpha, 1, "1.002772588722239781295385025434", 2},
		{"one unit", 0.02, money.Scale, "1027725.887222397812953850254342073554", 1_027_726},
		// Here the bound is 35.5 micro-units and the result may exceed the
		// ceiling by up to twice that.
		{"max", MaxAlpha, MaxQ, "23862943611198906.188344642429163531361510002687", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Subsidy(tc.alpha, tc.q0)
			exact := exactFloat(t, tc.exact)
			bound := errBoundEps * eps * tc.alpha * 2 * float64(tc.q0)
			lo, hi := ceilBig(exact), ceilBig(new(big.Float).Add(exact, bigOf(2*bound)))
			if int64(got) < lo || int64(got) > hi || tc.want != 0 && got != tc.want {
				t.Errorf("Subsidy(%v, %d) = %d, want in [%d, %d] (exact %s, bound %g)", tc.alpha, tc.q0, got, lo, hi, tc.exact, bound)
			}
		})
	}
}

// TestNoAllocs checks that the trade path allocates nothing.
func TestNoAllocs(t *testing.T) {
	alpha, q := 0.05/(2*math.Ln2), [2]money.Amount{1_300_000_000, 900_000_000}
	var sink money.Amount
	funcs := map[string]func(){
		"Cost":         func() { sink += money.Amount(Cost(alpha, q)) },
		"Prices":       func() { y, _ := Prices(alpha, q); sink += money.Amount(y) },
		"BuyCost":      func() { c, _ := BuyCost(alpha, q, 0, 10*money.Scale); sink += c },
		"SellProceeds": func() { c, _ := SellProceeds(alpha, q, 1, 10*money.Scale); sink += c },
		"QuoteBuy":     func() { qt, _ := QuoteBuy(alpha, q, 0, 10*money.Scale); sink += qt.Amount },
		"QuoteSell":    func() { qt, _ := QuoteSell(alpha, q, 1, 10*money.Scale); sink += qt.Amount },
		"Subsidy":      func() { sink += Subsidy(alpha, q[0]) },
		"Vig":          func() { sink += Vig(1e6, 0.6, 0.5) },
	}
	for name, f := range funcs {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, n)
		}
	}
	_ = sink
}
