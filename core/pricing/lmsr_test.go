package pricing

import (
	"math"
	"strings"
	"testing"

	"marketd/core/money"
)

// plainPrices is dC/dq from the plain, non-stable closed form
// p_i = alpha ln S + pi_i - (x pi_x + y pi_y)/Q. In range it never overflows
// (q_i/b <= 1/alpha <= 500), but it cancels: its absolute error is about
// 1e-13, so it checks prices near 1, not tiny ones (the reference table does).
func plainPrices(alpha, x, y float64) (px, py float64) {
	q := x + y
	b := alpha * q
	ex, ey := math.Exp(x/b), math.Exp(y/b)
	s := ex + ey
	pix, piy := ex/s, ey/s
	common := alpha*math.Log(s) - (x*pix+y*piy)/q
	return common + pix, common + piy
}

// costFloat is C at real-valued q, for central differences.
func costFloat(alpha, x, y float64) float64 {
	b := alpha * (x + y)
	return max(x, y) + b*math.Log1p(math.Exp(-math.Abs(x-y)/b))
}

// TestPricesMatchDerivative checks the stable price formulas against the
// plain formula for dC/dq and against central differences of C, over random
// states across the whole range.
func TestPricesMatchDerivative(t *testing.T) {
	r := newRand(t)
	for i := 0; i < 5000; i++ {
		alpha, q := randState(r)
		yes, no := Prices(alpha, q)
		x, y := float64(q[0]), float64(q[1])
		py, pn := plainPrices(alpha, x, y)
		if math.Abs(yes-py) > 1e-11 || math.Abs(no-pn) > 1e-11 {
			t.Fatalf("Prices(%v, %v) = %v, %v; plain formula %v, %v", alpha, q, yes, no, py, pn)
		}
		// Step 1e-4 of b: truncation error ~(h/b)^2/6 = 2e-9, rounding
		// ~u*C/h <= u*1e4/alpha = 6e-10.
		h := 1e-4 * alpha * (x + y)
		cy := (costFloat(alpha, x+h, y) - costFloat(alpha, x-h, y)) / (2 * h)
		cn := (costFloat(alpha, x, y+h) - costFloat(alpha, x, y-h)) / (2 * h)
		if math.Abs(yes-cy) > 1e-7 || math.Abs(no-cn) > 1e-7 {
			t.Fatalf("Prices(%v, %v) = %v, %v; central differences %v, %v", alpha, q, yes, no, cy, cn)
		}
	}
}

// TestPricesSymmetric checks that swapping the sides swaps the prices and
// keeps the cost, bit for bit: the formulas only see max, min and |d|.
func TestPricesSymmetric(t *testing.T) {
	r := newRand(t)
	for i := 0; i < 2000; i++ {
		alpha, q := randState(r)
		yes, no := Prices(alpha, q)
		swapped := [2]money.Amount{q[1], q[0]}
		yes2, no2 := Prices(alpha, swapped)
		if yes != no2 || no != yes2 || Cost(alpha, q) != Cost(alpha, swapped) {
			t.Fatalf("alpha %v q %v: prices %v, %v; swapped %v, %v", alpha, q, yes, no, yes2, no2)
		}
	}
}

func TestClosedForms(t *testing.T) {
	defaultAlpha := 0.05 / (2 * math.Ln2)
	tests := []struct {
		name      string
		alpha     float64
		q         [2]money.Amount
		cost      float64 // exact in reals
		yes, no   float64
		tolerance float64 // relative
	}{
		// Equal sides: C = q(1 + 2 alpha ln 2), each price 1/2 + alpha ln 2.
		{"default equal", defaultAlpha, [2]money.Amount{1e9, 1e9}, 1.05e9, 0.525, 0.525, 1e-15},
		{"max alpha equal", 1, [2]money.Amount{5, 5}, 5 * (1 + 2*math.Ln2), 0.5 + math.Ln2, 0.5 + math.Ln2, 1e-15},
		{"min alpha equal max", MinAlpha, [2]money.Amount{MaxQ, MaxQ}, 1e16 * (1 + 0.004*math.Ln2), 0.5 + 0.002*math.Ln2, 0.5 + 0.002*math.Ln2, 1e-15},
		// d/b = 500: the smaller price is about (2 + alpha) e^-500.
		{"min alpha extreme", MinAlpha, [2]money.Amount{1, MaxQ}, 1e16, 2.002 * math.Exp(-500), 1, 1e-12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Cost(tc.alpha, tc.q); relErr(got, tc.cost) > tc.tolerance {
				t.Errorf("Cost(%v, %v) = %v, want %v", tc.alpha, tc.q, got, tc.cost)
			}
			yes, no := Prices(tc.alpha, tc.q)
			if relErr(yes, tc.yes) > tc.tolerance || relErr(no, tc.no) > tc.tolerance {
				t.Errorf("Prices(%v, %v) = %v, %v, want %v, %v", tc.alpha, tc.q, yes, no, tc.yes, tc.no)
			}
		})
	}
}

// TestStateOutOfRangePanics checks that the functions without an error
// result refuse a state out of range with a BUG panic rather than return
// NaN or garbage.
func TestStateOutOfRangePanics(t *testing.T) {
	tests := []struct {
		name  string
		alpha float64
		q     [2]money.Amount
	}{
		{"alpha too small", 0.001, [2]money.Amount{1, 1}},
		{"alpha too large", 1.5, [2]money.Amount{1, 1}},
		{"alpha NaN", math.NaN(), [2]money.Amount{1, 1}},
		{"q yes zero", 0.1, [2]money.Amount{0, 1}},
		{"q no negative", 0.1, [2]money.Amount{1, -1}},
		{"q past max", 0.1, [2]money.Amount{MaxQ + 1, 1}},
	}
	funcs := []struct {
		name string
		call func(alpha float64, q [2]money.Amount)
	}{
		{"Cost", func(a float64, q [2]money.Amount) { Cost(a, q) }},
		{"Prices", func(a float64, q [2]money.Amount) { Prices(a, q) }},
		{"Subsidy", func(a float64, q [2]money.Amount) { Subsidy(a, min(q[0], q[1])) }},
	}
	for _, tc := range tests {
		for _, f := range funcs {
			if f.name == "Subsidy" && tc.q[0] > MaxQ {
				continue // Subsidy takes the smaller side, which is in range
			}
			t.Run(tc.name+"/"+f.name, func(t *testing.T) {
				defer func() {
					p := recover()
					if s, ok := p.(string); !ok || !strings.HasPrefix(s, "BUG: ") {
						t.Errorf("%s(%v, %v) panicked with %v, want a BUG panic", f.name, tc.alpha, tc.q, p)
					}
				}()
				f.call(tc.alpha, tc.q)
			})
		}
	}
}
