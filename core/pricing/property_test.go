package pricing

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"marketd/core/money"
)

// propOps is the number of operations TestProperties runs, over sequences of
// at most propSeqMax operations on random states.
const (
	propOps    = 100_000
	propSeqMax = 1000
)

// TestProperties runs random sequences of operations on random states across
// the whole range (alpha 0.002 to 1, q from 1 micro-unit to MaxQ, extreme
// imbalances), walking the state with the trades it prices. After each
// operation it checks the prices; the operations check that a round trip
// never pays the trader, that splitting a trade changes its cost only by
// rounding, that Cost grows with q, and that quotes agree with the plain
// functions.
func TestProperties(t *testing.T) {
	r := newRand(t)
	p := &prop{t: t, r: r}
	ops, seqs := 0, 0
	for ops < propOps {
		p.alpha, p.q = randState(r)
		n := 1 + r.IntN(propSeqMax)
		for i := 0; i < n && ops < propOps; i++ {
			ops++
			p.checkPrices()
			switch r.IntN(6) {
			case 0:
				p.buySell()
			case 1:
				p.sellBuy()
			case 2:
				p.splitBuy()
			case 3:
				p.splitSell()
			case 4:
				p.monotone()
			case 5:
				if r.IntN(50) == 0 { // an occasional jump keeps a sequence from staying local
					p.alpha, p.q = randState(r)
				}
			}
		}
		seqs++
	}
	t.Logf("%d operations in %d sequences", ops, seqs)
}

// prop is the state of one property run.
type prop struct {
	t     *testing.T
	r     *rand.Rand
	alpha float64
	q     [2]money.Amount
}

func (p *prop) fatalf(format string, args ...any) {
	p.t.Helper()
	p.t.Fatalf("alpha %v q %v: "+format, append([]any{p.alpha, p.q}, args...)...)
}

// shares returns a share count in [1, hi], log-uniform, a quarter of the
// time under one unit.
func (p *prop) shares(hi money.Amount) money.Amount {
	if p.r.IntN(4) == 0 {
		return logUniform(p.r, 1, min(hi, money.Scale))
	}
	return logUniform(p.r, 1, hi)
}

// bound is the error bound of the float part of C(to) - C(from).
func (p *prop) bound(from, to [2]money.Amount) float64 {
	a, b := eval(p.alpha, from), eval(p.alpha, to)
	return tradeBound(&a, &b)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// checkPrices checks both prices in (0, 1+v), their sum in [1, 1+v] up to a
// few ulps, and C(q) in [m, m + b ln 2] up to its rounding.
func (p *prop) checkPrices() {
	p.t.Helper()
	yes, no := Prices(p.alpha, p.q)
	v := 2 * p.alpha * math.Ln2
	for _, x := range []float64{yes, no} {
		if !finite(x) || !(x > 0) || !(x < 1+v) {
			p.fatalf("price %v not in (0, 1+v = %v)", x, 1+v)
		}
	}
	if s := yes + no; !(s >= 1-4*eps && s <= (1+v)*(1+4*eps)) {
		p.fatalf("prices %v + %v = %v not in [1, %v]", yes, no, s, 1+v)
	}
	c := Cost(p.alpha, p.q)
	m := float64(max(p.q[0], p.q[1]))
	b := p.alpha * float64(p.q[0]+p.q[1])
	if !finite(c) || c < m || c > (m+b*math.Ln2)*(1+4*eps) {
		p.fatalf("Cost = %v not in [m, m + b ln 2] = [%v, %v]", c, m, m+b*math.Ln2)
	}
}

// price returns the price of side at q.
func (p *prop) price(q [2]money.Amount, side int) float64 {
	yes, no := Prices(p.alpha, q)
	return [2]float64{yes, no}[side]
}

// buySell buys shares, sells them back, and keeps the new state half the
// time. C is convex, so n*p(q) <= C(q+n) - C(q) <= n*p(q+n): the cost must
// lie between, up to rounding; and the round trip may cost the trader only
// rounding (4 bounds and 2 micro-units), never pay him.
func (p *prop) buySell() {
	p.t.Helper()
	side := p.r.IntN(2)
	n := p.shares(MaxQ)
	cost, err := BuyCost(p.alpha, p.q, side, n)
	if n > MaxQ-p.q[side] {
		if !errors.Is(err, ErrLiquidityLimit) {
			p.fatalf("buy %d of side %d past MaxQ: error %v, want ErrLiquidityLimit", n, side, err)
		}
		return
	}
	if err != nil {
		p.fatalf("buy %d of side %d: %v", n, side, err)
	}
	after := p.q
	after[side] += n
	b := p.bound(p.q, after)
	fn := float64(n)
	if cost < 1 || float64(cost) < fn*p.price(p.q, side)*(1-1e-12)-1 ||
		float64(cost) > fn*p.price(after, side)*(1+1e-12)+2*b+1 {
		p.fatalf("buy %d of side %d costs %d; prices before %v, after %v", n, side, cost, p.price(p.q, side), p.price(after, side))
	}
	qt, err := QuoteBuy(p.alpha, p.q, side, n)
	if err != nil || !p.quoteMatches(qt, cost, after) {
		p.fatalf("QuoteBuy(side %d, %d) = %+v, %v; BuyCost %d", side, n, qt, err, cost)
	}
	proceeds, err := SellProceeds(p.alpha, after, side, n)
	if err != nil || proceeds < 0 || proceeds > cost || float64(cost-proceeds) > 4*b+2 {
		p.fatalf("buy %d of side %d costs %d, selling back pays %d, %v (bound %v)", n, side, cost, proceeds, err, b)
	}
	if p.r.IntN(2) == 0 {
		p.q = after
	}
}

// quoteMatches reports whether a quote agrees, bit for bit, with the plain
// functions: amount, q after, prices before and after, and vig.
func (p *prop) quoteMatches(qt Quote, amount money.Amount, after [2]money.Amount) bool {
	yes0, no0 := Prices(p.alpha, p.q)
	yes1, no1 := Prices(p.alpha, after)
	return qt.Amount == amount && qt.QAfter == after &&
		qt.PricesBefore == [2]float64{yes0, no0} && qt.PricesAfter == [2]float64{yes1, no1} &&
		qt.Vig == Vig(amount, yes0, no0) && qt.Vig >= 0 && qt.Vig <= amount
}

// sellBuy sells shares, buys them back, and keeps the new state half the
// time; the mirror of buySell.
func (p *prop) sellBuy() {
	p.t.Helper()
	side := p.r.IntN(2)
	if p.q[side] < 2 {
		return
	}
	n := p.shares(p.q[side] - 1)
	proceeds, err := SellProceeds(p.alpha, p.q, side, n)
	if err != nil {
		p.fatalf("sell %d of side %d: %v", n, side, err)
	}
	after := p.q
	after[side] -= n
	b := p.bound(after, p.q)
	fn := float64(n)
	if proceeds < 0 || float64(proceeds) > fn*p.price(p.q, side)*(1+1e-12) ||
		float64(proceeds) < fn*p.price(after, side)*(1-1e-12)-2*b-1 {
		p.fatalf("sell %d of side %d pays %d; prices before %v, after %v", n, side, proceeds, p.price(p.q, side), p.price(after, side))
	}
	qt, err := QuoteSell(p.alpha, p.q, side, n)
	if err != nil || !p.quoteMatches(qt, proceeds, after) {
		p.fatalf("QuoteSell(side %d, %d) = %+v, %v; SellProceeds %d", side, n, qt, err, proceeds)
	}
	cost, err := BuyCost(p.alpha, after, side, n)
	if err != nil || cost < proceeds || float64(cost-proceeds) > 4*b+2 {
		p.fatalf("sell %d of side %d pays %d, buying back costs %d, %v (bound %v)", n, side, proceeds, cost, err, b)
	}
	if p.r.IntN(2) == 0 {
		p.q = after
	}
}

// splitBuy checks that buying a then c costs what buying a+c costs, up to
// rounding: each rounded cost lies in [exact, exact + 2 bound + 1).
func (p *prop) splitBuy() {
	p.t.Helper()
	side := p.r.IntN(2)
	room := MaxQ - p.q[side]
	if room < 2 {
		return
	}
	total := p.shares(room)
	if total < 2 {
		total = 2
	}
	a := 1 + money.Amount(p.r.Int64N(int64(total-1)))
	mid, end := p.q, p.q
	mid[side] += a
	end[side] += total
	c1, err1 := BuyCost(p.alpha, p.q, side, a)
	c2, err2 := BuyCost(p.alpha, mid, side, total-a)
	c12, err12 := BuyCost(p.alpha, p.q, side, total)
	if err := errors.Join(err1, err2, err12); err != nil {
		p.fatalf("split buy %d+%d of side %d: %v", a, total-a, side, err)
	}
	b1, b2, b12 := p.bound(p.q, mid), p.bound(mid, end), p.bound(p.q, end)
	d := float64(c1 + c2 - c12)
	if d >= 2*(b1+b2)+2 || -d >= 2*b12+1 {
		p.fatalf("buy %d then %d of side %d costs %d + %d, at once %d (bounds %v %v %v)", a, total-a, side, c1, c2, c12, b1, b2, b12)
	}
}

// splitSell is splitBuy for sells: each rounded proceeds lies in
// (exact - 2 bound - 1, exact].
func (p *prop) splitSell() {
	p.t.Helper()
	side := p.r.IntN(2)
	if p.q[side] < 3 {
		return
	}
	total := max(2, p.shares(p.q[side]-1))
	a := 1 + money.Amount(p.r.Int64N(int64(total-1)))
	mid, end := p.q, p.q
	mid[side] -= a
	end[side] -= total
	s1, err1 := SellProceeds(p.alpha, p.q, side, a)
	s2, err2 := SellProceeds(p.alpha, mid, side, total-a)
	s12, err12 := SellProceeds(p.alpha, p.q, side, total)
	if err := errors.Join(err1, err2, err12); err != nil {
		p.fatalf("split sell %d+%d of side %d: %v", a, total-a, side, err)
	}
	b1, b2, b12 := p.bound(mid, p.q), p.bound(end, mid), p.bound(end, p.q)
	d := float64(s1 + s2 - s12)
	if -d >= 2*(b1+b2)+2 || d >= 2*b12+1 {
		p.fatalf("sell %d then %d of side %d pays %d + %d, at once %d (bounds %v %v %v)", a, total-a, side, s1, s2, s12, b1, b2, b12)
	}
}

// monotone checks that Cost grows with each q, up to its float rounding: a
// few ulps of the largest terms, 8 eps of m + m' + b + b'.
func (p *prop) monotone() {
	p.t.Helper()
	side := p.r.IntN(2)
	room := MaxQ - p.q[side]
	if room < 1 {
		return
	}
	next := p.q
	next[side] += p.shares(room)
	c0, c1 := eval(p.alpha, p.q), eval(p.alpha, next)
	tol := 8 * eps * (float64(c0.m) + float64(c1.m) + c0.b + c1.b)
	before, after := Cost(p.alpha, p.q), Cost(p.alpha, next)
	if !(after >= before-tol) {
		p.fatalf("Cost falls from %v to %v at q %v (tolerance %v)", before, after, next, tol)
	}
	// Split as the trade functions see it, the change is positive but for
	// its bound, with no m term.
	if float64(c1.m-c0.m)+(c1.g-c0.g) < -tradeBound(&c0, &c1) {
		p.fatalf("C(%v) - C(q) = %d + %v < -bound", next, c1.m-c0.m, c1.g-c0.g)
	}
}

// TestCollateralCovers runs markets from their subsidy through random buys
// and sells (never below q0, as markets trade) and checks that the
// collateral, subsidy + costs - proceeds in exact integers, always covers
// C(q) up to Cost's own float rounding, and so the most the market can owe
// its holders, max(q) - q0, exactly.
func TestCollateralCovers(t *testing.T) {
	r := newRand(t)
	for m := 0; m < 40; m++ {
		alpha := randAlpha(r)
		q0 := logUniform(r, 1, MaxQ/2)
		q := [2]money.Amount{q0, q0}
		collateral := Subsidy(alpha, q0)
		for i := 0; i < 500; i++ {
			side := r.IntN(2)
			if r.IntN(2) == 0 {
				n := logUniform(r, 1, max(1, min(q[side], MaxQ-q[side])))
				cost, err := BuyCost(alpha, q, side, n)
				if errors.Is(err, ErrLiquidityLimit) {
					continue
				}
				if err != nil {
					t.Fatalf("alpha %v q %v: buy %d of side %d: %v", alpha, q, n, side, err)
				}
				collateral += cost
				q[side] += n
			} else {
				if q[side] <= q0 {
					continue
				}
				n := logUniform(r, 1, q[side]-q0)
				proceeds, err := SellProceeds(alpha, q, side, n)
				if err != nil {
					t.Fatalf("alpha %v q %v: sell %d of side %d: %v", alpha, q, n, side, err)
				}
				collateral -= proceeds
				q[side] -= n
			}
			c := eval(alpha, q)
			tol := 8 * eps * (float64(c.m) + c.b)
			if float64(collateral) < Cost(alpha, q)-tol || collateral < max(q[0], q[1]) {
				t.Fatalf("alpha %v q0 %d q %v: collateral %d < C(q) = %v", alpha, q0, q, collateral, Cost(alpha, q))
			}
		}
	}
}
