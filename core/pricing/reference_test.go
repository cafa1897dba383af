package pricing

import (
	"bufio"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"

	"marketd/core/money"
)

// referenceState is one state of the reference table: C(q) and the prices
// dC/dq computed independently (see the comment on referenceStates).
type referenceState struct {
	name    string
	alpha   float64
	q       [2]money.Amount
	cost    string // exact C(q), 30 decimals
	yes, no float64
}

// referenceTrade is one trade on referenceStates[state] and its exact value:
// C(q') - C(q) for a buy, C(q) - C(q') for a sell.
type referenceTrade struct {
	state  int
	side   int
	sell   bool
	shares money.Amount
	exact  string // 30 decimals
}

// exactFloat parses a reference decimal at a precision that keeps all of its
// digits that matter (1e16 with 30 decimals needs 46 digits, ~153 bits).
func exactFloat(t *testing.T, s string) *big.Float {
	t.Helper()
	f, ok := new(big.Float).SetPrec(256).SetString(s)
	if !ok {
		t.Fatalf("bad reference decimal %q", s)
	}
	return f
}

// bigOf returns v (an integer or a float64) as an exact 256-bit big.Float.
func bigOf(v float64) *big.Float { return new(big.Float).SetPrec(256).SetFloat64(v) }

func bigInt(v int64) *big.Float { return new(big.Float).SetPrec(256).SetInt64(v) }

// ceilBig and floorBig round a big.Float to an integer.
func ceilBig(x *big.Float) int64 {
	i, acc := x.Int64()
	if acc == big.Below { // truncated towards zero from a positive value
		i++
	}
	return i
}

func floorBig(x *big.Float) int64 {
	i, acc := x.Int64()
	if acc == big.Above { // truncated towards zero from a negative value
		i--
	}
	return i
}

func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Abs(want)
}

func TestReferenceStates(t *testing.T) {
	for _, tc := range referenceStates {
		t.Run(tc.name, func(t *testing.T) {
			wantCost, err := strconv.ParseFloat(tc.cost, 64)
			if err != nil {
				t.Fatal(err)
			}
			// Cost is float64(m) + g: m rounds by u, g and the sum by a few u.
			if got := Cost(tc.alpha, tc.q); relErr(got, wantCost) > 4e-15 {
				t.Errorf("Cost(%v, %v) = %v, want %v (rel err %.3g)", tc.alpha, tc.q, got, tc.cost, relErr(got, wantCost))
			}
			yes, no := Prices(tc.alpha, tc.q)
			if relErr(yes, tc.yes) > 1e-12 || relErr(no, tc.no) > 1e-12 {
				t.Errorf("Prices(%v, %v) = %v, %v, want %v, %v (rel err %.3g, %.3g)",
					tc.alpha, tc.q, yes, no, tc.yes, tc.no, relErr(yes, tc.yes), relErr(no, tc.no))
			}
			if tc.q[0] == tc.q[1] {
				exact := exactFloat(t, tc.cost)
				got := Subsidy(tc.alpha, tc.q[0])
				c := eval(tc.alpha, tc.q)
				bound := errBoundEps * eps * c.b
				if bigInt(int64(got)).Cmp(exact) < 0 || got > money.Amount(ceilBig(new(big.Float).Add(exact, bigOf(2*bound)))) {
					t.Errorf("Subsidy(%v, %d) = %d, want in [ceil(%s), ceil(%s + 2*%g)]", tc.alpha, tc.q[0], got, tc.cost, tc.cost, bound)
				}
			}
		})
	}
}

// checkRoundedTrade checks one rounded trade against its exact value: a buy is at
// least the exact value and at most ceil(exact + 2*bound) (the float part is
// within the bound of exact, then widened by it), so it is ceil(exact) unless
// exact lies within 2*bound below an integer, and then one more; a sell
// mirrors it with floor. It also checks the float part's error against the
// bound itself and returns it as a fraction of the bound.
func checkRoundedTrade(t *testing.T, alpha float64, q [2]money.Amount, side int, sell bool, shares money.Amount, exactText string) float64 {
	t.Helper()
	exact := exactFloat(t, exactText)
	var (
		got  money.Amount
		err  error
		next = q
	)
	if sell {
		got, err = SellProceeds(alpha, q, side, shares)
		next[side] -= shares
	} else {
		got, err = BuyCost(alpha, q, side, shares)
		next[side] += shares
	}
	if err != nil {
		t.Fatalf("alpha %v q %v side %d sell %v shares %d: %v", alpha, q, side, sell, shares, err)
	}
	before, after := eval(alpha, q), eval(alpha, next)
	bound := tradeBound(&before, &after)
	twoBound := bigOf(2 * bound)
	// The float part as computed, and its error against exact - (integer part).
	dm, dg := after.m-before.m, after.g-before.g
	if sell {
		dm, dg = -dm, -dg
	}
	floatErr := new(big.Float).Sub(new(big.Float).Add(bigInt(dm), bigOf(dg)), exact)
	errF, _ := floatErr.Float64()
	if math.Abs(errF) > bound {
		t.Errorf("alpha %v q %v side %d sell %v shares %d: float part off by %g > bound %g", alpha, q, side, sell, shares, errF, bound)
	}
	g := bigInt(int64(got))
	if !sell {
		hi := ceilBig(new(big.Float).Add(exact, twoBound))
		if g.Cmp(exact) < 0 || int64(got) > hi {
			t.Errorf("BuyCost(%v, q before, %d, %d) = %d, want in [%s, %d] (bound %g)", alpha, side, shares, got, exactText, hi, bound)
		}
	} else {
		lo := max(0, floorBig(new(big.Float).Sub(exact, twoBound)))
		if g.Cmp(exact) > 0 || int64(got) < lo || got < 0 {
			t.Errorf("SellProceeds(%v, q before, %d, %d) = %d, want in [%d, %s] (bound %g)", alpha, side, shares, got, lo, exactText, bound)
		}
	}
	// The same check in the form "never past exact, at most the bound plus
	// one micro-unit short of it": rounding adds the bound and the float
	// part's own error to exact, then less than one to reach an integer.
	over, _ := new(big.Float).Sub(g, exact).Float64()
	if sell {
		over = -over
	}
	if over < 0 || over >= bound+math.Abs(errF)+1 {
		t.Errorf("alpha %v q %v side %d sell %v shares %d: rounded %d is %g from exact %s, bound %g", alpha, q, side, sell, shares, got, over, exactText, bound)
	}
	if bound == 0 {
		return 0
	}
	return math.Abs(errF) / bound
}

func TestReferenceTrades(t *testing.T) {
	worst := 0.0
	for _, tc := range referenceTrades {
		st := referenceStates[tc.state]
		name := st.name + "/" + map[bool]string{false: "buy", true: "sell"}[tc.sell] + "/" +
			strconv.Itoa(tc.side) + "/" + strconv.FormatInt(int64(tc.shares), 10)
		t.Run(name, func(t *testing.T) {
			worst = max(worst, checkRoundedTrade(t, st.alpha, st.q, tc.side, tc.sell, tc.shares, tc.exact))
		})
	}
	t.Logf("worst float error: %.3f of the bound (%d trades)", worst, len(referenceTrades))
}

// TestRandomTrades checks the rounding of 600 random trades over the whole
// range against exact values from testdata/reference.py random, and reports
// how much of the error bound the float part really used.
func TestRandomTrades(t *testing.T) {
	f, err := os.Open("testdata/random_trades.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	worst, n := 0.0, 0
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(text, "#") {
			continue
		}
		fs := strings.Fields(text)
		if len(fs) != 7 {
			t.Fatalf("line %d: %q: want 7 fields", line, text)
		}
		var v [6]int64
		alpha, err := strconv.ParseFloat(fs[0], 64)
		for i := 1; i < 6 && err == nil; i++ {
			v[i], err = strconv.ParseInt(fs[i], 10, 64)
		}
		if err != nil {
			t.Fatalf("line %d: %q: %v", line, text, err)
		}
		q := [2]money.Amount{money.Amount(v[1]), money.Amount(v[2])}
		worst = max(worst, checkRoundedTrade(t, alpha, q, int(v[3]), v[4] == 1, money.Amount(v[5]), fs[6]))
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 500 {
		t.Fatalf("read %d trades, want the file's 600", n)
	}
	t.Logf("worst float error: %.3f of the bound (%d trades)", worst, n)
}

// The reference table below is the output of testdata/reference.py, pasted.
// The script computes, with Python's decimal module at 400 digits (checked
// against 450 to 50 significant digits; 400 because the plain formula
// cancels away up to 217 digits for the smallest price in range), from the
// plain, non-stable formulas and alpha's exact binary value:
// C(q) = b ln(exp(q_yes/b) + exp(q_no/b)); the prices
// p_i = alpha ln S + pi_i - (q_yes pi_yes + q_no pi_no)/Q, cross-checked
// against central differences of C to 40 digits; and each trade's exact
// value C(q') - C(q), given to 30 decimals.
// Code below generated by testdata/reference.py; do not edit by hand.
var referenceStates = []referenceState{
	{name: "default 1000 units", alpha: 0.03606737602222409, q: [2]money.Amount{1000000000, 1000000000}, cost: "1050000000.000000005066149664684853136104", yes: 0.525, no: 0.525},
	{name: "default 3:1", alpha: 0.03606737602222409, q: [2]money.Amount{3000000000, 1000000000}, cost: "3000000137.586055084114027304387390862236", yes: 0.9999995575598103, no: 1.464906624139654e-06},
	{name: "min alpha max imbalance yes", alpha: 0.002, q: [2]money.Amount{10000000000000000, 1}, cost: "10000000000000000.000000000000000000000000000000", yes: 1.0, no: 1.4263401966297627e-217},
	{name: "min alpha max imbalance no", alpha: 0.002, q: [2]money.Amount{1, 10000000000000000}, cost: "10000000000000000.000000000000000000000000000000", yes: 1.4263401966297627e-217, no: 1.0},
	{name: "min alpha equal max", alpha: 0.002, q: [2]money.Amount{10000000000000000, 10000000000000000}, cost: "10027725887222397.812953850254342073553797318674", yes: 0.5013862943611199, no: 0.5013862943611199},
	{name: "min alpha tiny equal", alpha: 0.002, q: [2]money.Amount{1, 1}, cost: "1.002772588722239781295385025434", yes: 0.5013862943611199, no: 0.5013862943611199},
	{name: "min alpha slight imbalance", alpha: 0.002, q: [2]money.Amount{1001000000, 1000000000}, cost: "1003305128.477792575065411675150958540145", yes: 0.5635165552235886, no: 0.4392250566989804},
	{name: "min alpha 2:1", alpha: 0.002, q: [2]money.Amount{2000000000, 1000000000}, cost: "2000000000.000000000000000000000000000000", yes: 1.0, no: 5.5357445314459344e-73},
	{name: "min alpha near max", alpha: 0.002, q: [2]money.Amount{9999999999999999, 10000000000000000}, cost: "10027725887222397.311567555893225307906104805957", yes: 0.5013862943611136, no: 0.5013862943611261},
	{name: "min alpha beyond 2^53", alpha: 0.002, q: [2]money.Amount{9007199254740993, 9007199254740992}, cost: "9032172513813653.938741679415878753552868644271", yes: 0.5013862943611268, no: 0.5013862943611129},
	{name: "max alpha equal", alpha: 1.0, q: [2]money.Amount{1000000000, 1000000000}, cost: "2386294361.119890618834464242916353136151", yes: 1.1931471805599454, no: 1.1931471805599454},
	{name: "max alpha equal max", alpha: 1.0, q: [2]money.Amount{10000000000000000, 10000000000000000}, cost: "23862943611198906.188344642429163531361510002687", yes: 1.1931471805599454, no: 1.1931471805599454},
	{name: "max alpha tiny equal", alpha: 1.0, q: [2]money.Amount{1, 1}, cost: "2.386294361119890618834464242916", yes: 1.1931471805599454, no: 1.1931471805599454},
	{name: "max alpha max imbalance", alpha: 1.0, q: [2]money.Amount{10000000000000000, 1}, cost: "13132616875182229.191634485207891671288216460477", yes: 1.3132616875182228, no: 0.8511445302582131},
	{name: "alpha 0.5 tiny", alpha: 0.5, q: [2]money.Amount{1, 2}, cost: "2.621555130278108085480311826896", yes: 0.6595098850716131, no: 0.9810226226032475},
	{name: "alpha 0.75 large imbalance", alpha: 0.75, q: [2]money.Amount{5000000000000000, 3}, cost: "5877359469040807.820390396689324875612520092700", yes: 1.1754718938081612, no: 0.5926889484602517},
	{name: "alpha 0.3 odd max", alpha: 0.3, q: [2]money.Amount{7, 9999999999999997}, cost: "10105157248238386.782972343543464630892864630924", yes: 0.07940611615626157, no: 1.010515724823839},
	{name: "alpha 0.1 uneven", alpha: 0.1, q: [2]money.Amount{123456789, 987654321}, cost: "987700860.375971387946960660157727640034", yes: 0.000786359531453879, no: 0.9999488261776344},
	{name: "alpha 0.01 2:1 large", alpha: 0.01, q: [2]money.Amount{1000000000000, 500000000000}, cost: "1000000000000.000050073566930475045026544426", yes: 0.9999999999999978, no: 4.48436610510698e-15},
	{name: "alpha 0.02 one unit", alpha: 0.02, q: [2]money.Amount{1000000, 1000000}, cost: "1027725.887222397812953850254342073554", yes: 0.5138629436111989, no: 0.5138629436111989},
}

var referenceTrades = []referenceTrade{
	{state: 0, side: 0, sell: false, shares: 1, exact: "0.525000001732867953066503941163"},
	{state: 0, side: 0, sell: false, shares: 142857142, exact: "104160707.807034325640972563622183519267"},
	{state: 0, side: 0, sell: false, shares: 3333333000000000, exact: "3333332950000109.345498334779516023724540608753"},
	{state: 0, side: 0, sell: false, shares: 9999999000000000, exact: "9999998950000328.032725782967466554633031198933"},
	{state: 0, side: 0, sell: true, shares: 1, exact: "0.524999998267132050266777772122"},
	{state: 0, side: 0, sell: true, shares: 500000000, exact: "49994758.549445547729642645368776103906"},
	{state: 0, side: 0, sell: true, shares: 999999999, exact: "49999999.999967201976898822208012950351"},
	{state: 0, side: 1, sell: false, shares: 1, exact: "0.525000001732867953066503941163"},
	{state: 0, side: 1, sell: false, shares: 142857142, exact: "104160707.807034325640972563622183519267"},
	{state: 0, side: 1, sell: false, shares: 3333333000000000, exact: "3333332950000109.345498334779516023724540608753"},
	{state: 0, side: 1, sell: false, shares: 9999999000000000, exact: "9999998950000328.032725782967466554633031198933"},
	{state: 0, side: 1, sell: true, shares: 1, exact: "0.524999998267132050266777772122"},
	{state: 0, side: 1, sell: true, shares: 500000000, exact: "49994758.549445547729642645368776103906"},
	{state: 0, side: 1, sell: true, shares: 999999999, exact: "49999999.999967201976898822208012950351"},
	{state: 1, side: 0, sell: false, shares: 1, exact: "0.999999557559811141114295347627"},
	{state: 1, side: 0, sell: false, shares: 428571428, exact: "428571330.237454711934358274555375885300"},
	{state: 1, side: 0, sell: false, shares: 3333332333333333, exact: "3333332333333304.759486993181486797543436422007"},
	{state: 1, side: 0, sell: false, shares: 9999997000000000, exact: "9999997000000190.446670703919588914930493472802"},
	{state: 1, side: 0, sell: true, shares: 1, exact: "0.999999557559809488525788437994"},
	{state: 1, side: 0, sell: true, shares: 1500000000, exact: "1499648603.261437702198791154357863461531"},
	{state: 1, side: 0, sell: true, shares: 2999999999, exact: "2000000137.586022281024776461910550676482"},
	{state: 1, side: 1, sell: false, shares: 1, exact: "0.000001464906631576302203150121"},
	{state: 1, side: 1, sell: false, shares: 142857142, exact: "460.321994473370444930267158948666"},
	{state: 1, side: 1, sell: false, shares: 3333333000000000, exact: "3333330999999971.763146961754992199044687821538"},
	{state: 1, side: 1, sell: false, shares: 9999999000000000, exact: "9999997000000190.450374329248180739020389663419"},
	{state: 1, side: 1, sell: true, shares: 1, exact: "0.000001464906616703005640963421"},
	{state: 1, side: 1, sell: true, shares: 500000000, exact: "137.269590166448255485517200004832"},
	{state: 1, side: 1, sell: true, shares: 999999999, exact: "137.585956674849978362073245075339"},
	{state: 2, side: 0, sell: true, shares: 1, exact: "1.000000000000000000000000000000"},
	{state: 2, side: 0, sell: true, shares: 5000000000000000, exact: "5000000000000000.000000000000000000000000000000"},
	{state: 2, side: 0, sell: true, shares: 9999999999999999, exact: "9999999999999998.997227411277760218704614974566"},
	{state: 2, side: 1, sell: false, shares: 1, exact: "0E-30"},
	{state: 2, side: 1, sell: false, shares: 3333333333333333, exact: "0E-30"},
	{state: 2, side: 1, sell: false, shares: 9999999999999999, exact: "27725887222397.812953850254342073553797318674"},
	{state: 3, side: 0, sell: false, shares: 1, exact: "0E-30"},
	{state: 3, side: 0, sell: false, shares: 3333333333333333, exact: "0E-30"},
	{state: 3, side: 0, sell: false, shares: 9999999999999999, exact: "27725887222397.812953850254342073553797318674"},
	{state: 3, side: 1, sell: true, shares: 1, exact: "1.000000000000000000000000000000"},
	{state: 3, side: 1, sell: true, shares: 5000000000000000, exact: "5000000000000000.000000000000000000000000000000"},
	{state: 3, side: 1, sell: true, shares: 9999999999999999, exact: "9999999999999998.997227411277760218704614974566"},
	{state: 4, side: 0, sell: true, shares: 1, exact: "0.501386294361116765647692512717"},
	{state: 4, side: 0, sell: true, shares: 5000000000000000, exact: "27725887222397.812953850254342073553797318674"},
	{state: 4, side: 0, sell: true, shares: 9999999999999999, exact: "27725887222397.812953850254342073553797318674"},
	{state: 4, side: 1, sell: true, shares: 1, exact: "0.501386294361116765647692512717"},
	{state: 4, side: 1, sell: true, shares: 5000000000000000, exact: "27725887222397.812953850254342073553797318674"},
	{state: 4, side: 1, sell: true, shares: 9999999999999999, exact: "27725887222397.812953850254342073553797318674"},
	{state: 5, side: 0, sell: false, shares: 1, exact: "0.997227411277760218704614974566"},
	{state: 5, side: 0, sell: false, shares: 3333333333333333, exact: "3333333333333332.997227411277760218704614974566"},
	{state: 5, side: 0, sell: false, shares: 9999999999999999, exact: "9999999999999998.997227411277760218704614974566"},
	{state: 5, side: 1, sell: false, shares: 1, exact: "0.997227411277760218704614974566"},
	{state: 5, side: 1, sell: false, shares: 3333333333333333, exact: "3333333333333332.997227411277760218704614974566"},
	{state: 5, side: 1, sell: false, shares: 9999999999999999, exact: "9999999999999998.997227411277760218704614974566"},
	{state: 6, side: 0, sell: false, shares: 1, exact: "0.563516585944721774078209275468"},
	{state: 6, side: 0, sell: false, shares: 143000000, exact: "140694871.522207436096500302491636302879"},
	{state: 6, side: 0, sell: false, shares: 3333332999666666, exact: "3333332997361537.522207424934588324849041459855"},
	{state: 6, side: 0, sell: false, shares: 9999998999000000, exact: "9999998996694871.522207424934588324849041459855"},
	{state: 6, side: 0, sell: true, shares: 1, exact: "0.563516524502454801760644890298"},
	{state: 6, side: 0, sell: true, shares: 500500000, exact: "3305128.477792575065411675150958540145"},
	{state: 6, side: 0, sell: true, shares: 1000999999, exact: "3305128.477792575065411675150958540145"},
	{state: 6, side: 1, sell: false, shares: 1, exact: "0.439225087481587143007509663446"},
	{state: 6, side: 1, sell: false, shares: 142857142, exact: "139552013.522207443290833134220189903328"},
	{state: 6, side: 1, sell: false, shares: 3333333000000000, exact: "3333332996694871.522207424934588324849041459855"},
	{state: 6, side: 1, sell: false, shares: 9999999000000000, exact: "9999998996694871.522207424934588324849041459855"},
	{state: 6, side: 1, sell: true, shares: 1, exact: "0.439225025916374194478339411339"},
	{state: 6, side: 1, sell: true, shares: 500000000, exact: "2305128.477792575065411675150958540145"},
	{state: 6, side: 1, sell: true, shares: 999999999, exact: "2305128.477792575065411675150958540145"},
	{state: 7, side: 0, sell: false, shares: 1, exact: "1.000000000000000000000000000000"},
	{state: 7, side: 0, sell: false, shares: 285714285, exact: "285714285.000000000000000000000000000000"},
	{state: 7, side: 0, sell: false, shares: 3333332666666666, exact: "3333332666666666.000000000000000000000000000000"},
	{state: 7, side: 0, sell: false, shares: 9999998000000000, exact: "9999998000000000.000000000000000000000000000000"},
	{state: 7, side: 0, sell: true, shares: 1, exact: "1.000000000000000000000000000000"},
	{state: 7, side: 0, sell: true, shares: 1000000000, exact: "997227411.277760218704614974565792644620"},
	{state: 7, side: 0, sell: true, shares: 1999999999, exact: "1000000000.000000000000000000000000000000"},
	{state: 7, side: 1, sell: false, shares: 1, exact: "0E-30"},
	{state: 7, side: 1, sell: false, shares: 142857142, exact: "0E-30"},
	{state: 7, side: 1, sell: false, shares: 3333333000000000, exact: "3333332000000000.000000000000000000000000000000"},
	{state: 7, side: 1, sell: false, shares: 9999999000000000, exact: "9999998000000000.000000000000000000000000000000"},
	{state: 7, side: 1, sell: true, shares: 1, exact: "0E-30"},
	{state: 7, side: 1, sell: true, shares: 500000000, exact: "0E-30"},
	{state: 7, side: 1, sell: true, shares: 999999999, exact: "0E-30"},
	{state: 8, side: 0, sell: false, shares: 1, exact: "0.501386294361116765647692512717"},
	{state: 8, side: 0, sell: true, shares: 1, exact: "0.501386294361110515647692512716"},
	{state: 8, side: 0, sell: true, shares: 4999999999999999, exact: "27725887222397.311567555893225307906104805957"},
	{state: 8, side: 0, sell: true, shares: 9999999999999998, exact: "27725887222397.311567555893225307906104805957"},
	{state: 8, side: 1, sell: true, shares: 1, exact: "0.501386294361123015647692512717"},
	{state: 8, side: 1, sell: true, shares: 5000000000000000, exact: "27725887222398.311567555893225307906104805957"},
	{state: 8, side: 1, sell: true, shares: 9999999999999999, exact: "27725887222398.311567555893225307906104805957"},
	{state: 9, side: 0, sell: false, shares: 1, exact: "0.501386294361130298988548373558"},
	{state: 9, side: 0, sell: false, shares: 330933581753002, exact: "305964762700391.112974913097084332820052223059"},
	{state: 9, side: 0, sell: false, shares: 992800745259007, exact: "967827486186518.932394984656277587506669851466"},
	{state: 9, side: 0, sell: true, shares: 1, exact: "0.501386294361123360094644466331"},
	{state: 9, side: 0, sell: true, shares: 4503599627370496, exact: "24973259072661.938741679415878753552868644271"},
	{state: 9, side: 0, sell: true, shares: 9007199254740992, exact: "24973259072661.938741679415878753552868644271"},
	{state: 9, side: 1, sell: false, shares: 1, exact: "0.501386294361116421200740559103"},
	{state: 9, side: 1, sell: false, shares: 330933581753002, exact: "305964762700390.113216922965882927586401120152"},
	{state: 9, side: 1, sell: false, shares: 992800745259008, exact: "967827486186518.932394984661071729813412569632"},
	{state: 9, side: 1, sell: true, shares: 1, exact: "0.501386294361109482306836651875"},
	{state: 9, side: 1, sell: true, shares: 4503599627370496, exact: "24973259072660.938741679415878753552868644271"},
	{state: 9, side: 1, sell: true, shares: 9007199254740991, exact: "24973259072660.938741679415878753552868644271"},
	{state: 10, side: 0, sell: false, shares: 1, exact: "1.193147180622445309385982121473"},
	{state: 10, side: 0, sell: false, shares: 142857142, exact: "171639851.983568673645457356777045662924"},
	{state: 10, side: 0, sell: false, shares: 3333333000000000, exact: "4377538298752154.897746195318248776168825875091"},
	{state: 10, side: 0, sell: false, shares: 9999999000000000, exact: "13132615340032436.801196339156360028140141214987"},
	{state: 10, side: 0, sell: true, shares: 1, exact: "1.193147180497445309385982121443"},
	{state: 10, side: 0, sell: true, shares: 500000000, exact: "575835999.085777937595322010543147134319"},
	{state: 10, side: 0, sell: true, shares: 999999999, exact: "1073032672.750523254134031806190936980628"},
	{state: 10, side: 1, sell: false, shares: 1, exact: "1.193147180622445309385982121473"},
	{state: 10, side: 1, sell: false, shares: 142857142, exact: "171639851.983568673645457356777045662924"},
	{state: 10, side: 1, sell: false, shares: 3333333000000000, exact: "4377538298752154.897746195318248776168825875091"},
	{state: 10, side: 1, sell: false, shares: 9999999000000000, exact: "13132615340032436.801196339156360028140141214987"},
	{state: 10, side: 1, sell: true, shares: 1, exact: "1.193147180497445309385982121443"},
	{state: 10, side: 1, sell: true, shares: 500000000, exact: "575835999.085777937595322010543147134319"},
	{state: 10, side: 1, sell: true, shares: 999999999, exact: "1073032672.750523254134031806190936980628"},
	{state: 11, side: 0, sell: true, shares: 1, exact: "1.193147180559945303167232121458"},
	{state: 11, side: 0, sell: true, shares: 5000000000000000, exact: "5758359990857779.375953220105431471343191073390"},
	{state: 11, side: 0, sell: true, shares: 9999999999999999, exact: "10730326736016676.996710157221271860073293542210"},
	{state: 11, side: 1, sell: true, shares: 1, exact: "1.193147180559945303167232121458"},
	{state: 11, side: 1, sell: true, shares: 5000000000000000, exact: "5758359990857779.375953220105431471343191073390"},
	{state: 11, side: 1, sell: true, shares: 9999999999999999, exact: "10730326736016676.996710157221271860073293542210"},
	{state: 12, side: 0, sell: false, shares: 1, exact: "1.234622362948334743643820221830"},
	{state: 12, side: 0, sell: false, shares: 3333333333333333, exact: "4377538958394075.453854612467030649518420643561"},
	{state: 12, side: 0, sell: false, shares: 9999999999999999, exact: "13132616875182226.805340124088001052453752217561"},
	{state: 12, side: 1, sell: false, shares: 1, exact: "1.234622362948334743643820221830"},
	{state: 12, side: 1, sell: false, shares: 3333333333333333, exact: "4377538958394075.453854612467030649518420643561"},
	{state: 12, side: 1, sell: false, shares: 9999999999999999, exact: "13132616875182226.805340124088001052453752217561"},
	{state: 13, side: 0, sell: true, shares: 1, exact: "1.313261687518222834048995494968"},
	{state: 13, side: 0, sell: true, shares: 5000000000000000, exact: "6566308437591114.170244977474839238887189752132"},
	{state: 13, side: 0, sell: true, shares: 9999999999999999, exact: "13132616875182226.805340124088001052453752217561"},
	{state: 13, side: 1, sell: false, shares: 1, exact: "0.851144530258213193513836956213"},
	{state: 13, side: 1, sell: false, shares: 3333333333333333, exact: "3188409580552527.246930804444740503464261700653"},
	{state: 13, side: 1, sell: false, shares: 9999999999999999, exact: "10730326736016676.996710157221271860073293542210"},
	{state: 14, side: 0, sell: false, shares: 1, exact: "0.764739230841782533354152416020"},
	{state: 14, side: 0, sell: false, shares: 3333333333333333, exact: "3544880018404952.851900117211589811560674508308"},
	{state: 14, side: 0, sell: false, shares: 9999999999999999, exact: "10634640055214860.464403202885126324871406725177"},
	{state: 14, side: 1, sell: false, shares: 1, exact: "1.004968244758337582617679163040"},
	{state: 14, side: 1, sell: false, shares: 3333333333333332, exact: "3544880018404952.550030267645868073481361935110"},
	{state: 14, side: 1, sell: false, shares: 9999999999999998, exact: "10634640055214860.162533353319404838776699120395"},
	{state: 14, side: 1, sell: true, shares: 1, exact: "0.928407949718162776063079705438"},
	{state: 15, side: 0, sell: false, shares: 1, exact: "1.175471893808161208464710261714"},
	{state: 15, side: 0, sell: false, shares: 714285714285714, exact: "839622781291543.384482823384606815381828838535"},
	{state: 15, side: 0, sell: false, shares: 1666666666666666, exact: "1959119823013601.230459921230749268909135887162"},
	{state: 15, side: 0, sell: false, shares: 5000000000000000, exact: "5877359469040806.042323551308570421766039768398"},
	{state: 15, side: 0, sell: true, shares: 1, exact: "1.175471893808161208464710261714"},
	{state: 15, side: 0, sell: true, shares: 2500000000000000, exact: "2938679734520403.021161775654284616555385133746"},
	{state: 15, side: 0, sell: true, shares: 4999999999999999, exact: "5877359469040803.577280136133108704651896438909"},
	{state: 15, side: 1, sell: false, shares: 1, exact: "0.592688948460251704736839645306"},
	{state: 15, side: 1, sell: false, shares: 3333333333333332, exact: "2676868798809035.212918873115511978321330041641"},
	{state: 15, side: 1, sell: false, shares: 9999999999999997, exact: "9696067515775130.736377933419148393327277886949"},
	{state: 15, side: 1, sell: true, shares: 1, exact: "0.592688948460251528639762682209"},
	{state: 15, side: 1, sell: true, shares: 2, exact: "1.185377896920502881182448401320"},
	{state: 16, side: 0, sell: false, shares: 1, exact: "0.079406116156261596445006391300"},
	{state: 16, side: 0, sell: false, shares: 3333333333333331, exact: "586874707304967.902865318439799931962491303767"},
	{state: 16, side: 0, sell: false, shares: 9999999999999993, exact: "4053725835121282.795788994819001463006705261489"},
	{state: 16, side: 0, sell: true, shares: 1, exact: "0.079406116156261552100040842329"},
	{state: 16, side: 0, sell: true, shares: 3, exact: "0.238218348468784523265225880077"},
	{state: 16, side: 0, sell: true, shares: 6, exact: "0.476436696937568647425761819423"},
	{state: 16, side: 1, sell: false, shares: 1, exact: "1.010515724823838925867670492115"},
	{state: 16, side: 1, sell: false, shares: 3, exact: "3.031547174471516777603011476345"},
	{state: 16, side: 1, sell: true, shares: 1, exact: "1.010515724823838925867670492115"},
	{state: 16, side: 1, sell: true, shares: 4999999999999998, exact: "5052578624119192.608306902812896799332936435668"},
	{state: 16, side: 1, sell: true, shares: 9999999999999996, exact: "10105157248238379.593636981241345558717874797403"},
	{state: 17, side: 0, sell: false, shares: 1, exact: "0.000786359537407177737055229556"},
	{state: 17, side: 0, sell: false, shares: 17636684, exact: "15872.640951331932226683016135973722"},
	{state: 17, side: 0, sell: false, shares: 3333333292181070, exact: "3333347560997936.809039172160422529713784603475"},
	{state: 17, side: 0, sell: false, shares: 9999999876543211, exact: "10000044411292515.221541155420357516363563818371"},
	{state: 17, side: 0, sell: true, shares: 1, exact: "0.000786359525500580399561080540"},
	{state: 17, side: 0, sell: true, shares: 61728394, exact: "31090.680805985178013972570129838236"},
	{state: 17, side: 0, sell: true, shares: 123456788, exact: "42055.533978034327531558420527205835"},
	{state: 17, side: 1, sell: false, shares: 1, exact: "0.999948826177727439345721500210"},
	{state: 17, side: 1, sell: false, shares: 141093474, exact: "141087767.969974167771430921793550239028"},
	{state: 17, side: 1, sell: false, shares: 3333333004115226, exact: "3333348137049851.308095734149691874131214191157"},
	{state: 17, side: 1, sell: false, shares: 9999999012345679, exact: "10000044411210126.320513947392066867036784834354"},
	{state: 17, side: 1, sell: true, shares: 1, exact: "0.999948826177541398765713743751"},
	{state: 17, side: 1, sell: true, shares: 493827160, exact: "493720879.310839179528827266284964442331"},
	{state: 17, side: 1, sell: true, shares: 987654320, exact: "864243510.895643907439543970704281578306"},
	{state: 18, side: 0, sell: false, shares: 1, exact: "0.999999999999997807890514426440"},
	{state: 18, side: 0, sell: false, shares: 142857142857, exact: "142857142856.999950092953643731947912624914"},
	{state: 18, side: 0, sell: false, shares: 3333000000000000, exact: "3332999999999999.999949926433069524954973455576"},
	{state: 18, side: 0, sell: false, shares: 9999000000000000, exact: "9998999999999999.999949926433069524954973455578"},
	{state: 18, side: 0, sell: true, shares: 1, exact: "0.999999999999997807890514327530"},
	{state: 18, side: 0, sell: true, shares: 500000000000, exact: "493068528194.400596835104366889526638095096"},
	{state: 18, side: 0, sell: true, shares: 999999999999, exact: "500000000000.000050073566930475045026544426"},
	{state: 18, side: 1, sell: false, shares: 1, exact: "4.484366105304801E-15"},
	{state: 18, side: 1, sell: false, shares: 71428571428, exact: "0.022435278093762255443969219714"},
	{state: 18, side: 1, sell: false, shares: 3333166666666666, exact: "3332666666666665.999949926433069524954973455576"},
	{state: 18, side: 1, sell: false, shares: 9999500000000000, exact: "9998999999999999.999949926433069524954973455578"},
	{state: 18, side: 1, sell: true, shares: 1, exact: "4.484366104909158E-15"},
	{state: 18, side: 1, sell: true, shares: 250000000000, exact: "0.000050073566930365588642010719"},
	{state: 18, side: 1, sell: true, shares: 499999999999, exact: "0.000050073566930475045026544426"},
	{state: 19, side: 0, sell: false, shares: 1, exact: "0.513866068609636325878023424696"},
	{state: 19, side: 0, sell: false, shares: 142857, exact: "116633.363673557641636450718796063007"},
	{state: 19, side: 0, sell: false, shares: 3333333333000000, exact: "3333333332972274.112777615045378861684265003199"},
	{state: 19, side: 0, sell: false, shares: 9999999999000000, exact: "9999999998972274.112777640762043498631525757426"},
	{state: 19, side: 0, sell: true, shares: 1, exact: "0.513859818609636487076070189086"},
	{state: 19, side: 0, sell: true, shares: 500000, exact: "27725.885489073307201672683818192932"},
	{state: 19, side: 0, sell: true, shares: 999999, exact: "27725.887222397812953846396452750869"},
	{state: 19, side: 1, sell: false, shares: 1, exact: "0.513866068609636325878023424696"},
	{state: 19, side: 1, sell: false, shares: 142857, exact: "116633.363673557641636450718796063007"},
	{state: 19, side: 1, sell: false, shares: 3333333333000000, exact: "3333333332972274.112777615045378861684265003199"},
	{state: 19, side: 1, sell: false, shares: 9999999999000000, exact: "9999999998972274.112777640762043498631525757426"},
	{state: 19, side: 1, sell: true, shares: 1, exact: "0.513859818609636487076070189086"},
	{state: 19, side: 1, sell: true, shares: 500000, exact: "27725.885489073307201672683818192932"},
	{state: 19, side: 1, sell: true, shares: 999999, exact: "27725.887222397812953846396452750869"},
}
