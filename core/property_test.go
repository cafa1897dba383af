package core_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// domainErrs are the refusals a random workload may meet; any other error
// fails the test.
var domainErrs = []error{core.ErrInsufficientBalance, core.ErrInsufficientShares, core.ErrInsufficientLiquidity,
	core.ErrLiquidityLimit, core.ErrSlippage, core.ErrMarketNotActive, core.ErrMarketResolved,
	core.ErrReferrerSet, core.ErrSelfReferral, core.ErrReferralCycle}

func isDomain(err error) bool {
	for _, d := range domainErrs {
		if errors.Is(err, d) {
			return true
		}
	}
	return false
}

// TestPropertyRandomWorkloads runs seeded random sequences of operations
// (10^5 in all, each sequence at most 1,000; five times more in the long
// build), checks cheap invariants after every step and the full checker
// every 100 steps, and finally that replaying the log rebuilds exactly the
// live state.
func TestPropertyRandomWorkloads(t *testing.T) {
	const steps = 1000
	sequences := propertySequences
	total := 0
	for seq := range sequences {
		seed := uint64(seq) + 0x5eed
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			w := newWorkload(t, seed)
			for step := range steps {
				w.step(step)
				total++
				if step%100 == 99 {
					w.h.check()
				}
			}
			w.h.check()
			requireEqual(t, w.h.replayed(), w.h.e.State())
			// A workload that is mostly refused would prove little.
			if w.ok < steps/4 {
				t.Fatalf("seed %d: only %d of %d steps succeeded", seed, w.ok, steps)
			}
		})
	}
	if total != sequences*steps {
		t.Fatalf("ran %d steps", total)
	}
}

type workload struct {
	t       *testing.T
	seed    uint64
	r       *rand.Rand
	h       *harness
	accts   []uuid.UUID
	markets []uuid.UUID
	ok      int // steps that changed the state
}

func newWorkload(t *testing.T, seed uint64) *workload {
	w := &workload{t: t, seed: seed, r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), h: newHarness(t)}
	for i := range 2 + w.r.IntN(6) {
		w.accts = append(w.accts, w.h.account(fmt.Sprintf("acct%d", i), core.RoleSpeculator, 1+w.r.Int64N(100_000)))
	}
	for range 1 + w.r.IntN(3) {
		w.newMarket()
	}
	return w
}

func (w *workload) newMarket() {
	alpha := core.MinAlpha + w.r.Float64()*(core.MaxAlpha-core.MinAlpha)
	liq := []int64{1, 10, 1000, 100_000, 10_000_000}[w.r.IntN(5)]
	w.markets = append(w.markets, w.h.market(fmt.Sprintf("m%d", len(w.markets)), alpha, liq))
}

func (w *workload) fail(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("seed %d: "+format, append([]any{w.seed}, args...)...)
}

// shares draws a share count spanning micro-units to thousands of units.
func (w *workload) shares() money.Amount {
	return money.Amount(math.Pow(10, w.r.Float64()*10)) + 1
}

func (w *workload) step(i int) {
	a := w.accts[w.r.IntN(len(w.accts))]
	m := w.markets[w.r.IntN(len(w.markets))]
	before, _ := w.h.e.Account(a)
	mBefore, _ := w.h.e.Market(m)
	var err error
	switch k := w.r.IntN(100); {
	case k < 40:
		req := core.TradeRequest{Account: a, Market: m, Side: core.Side(w.r.IntN(2)), Shares: w.shares()}
		if w.r.IntN(4) == 0 {
			req.HasLimit, req.Limit = true, w.shares()
		}
		_, err = w.h.e.Trade(w.h.ctx, req)
	case k < 65:
		side := core.Side(w.r.IntN(2))
		held := heldShares(before, m, side)
		n := w.shares()
		if held > 0 && w.r.IntN(8) != 0 {
			n = money.Amount(1 + w.r.Int64N(int64(held)))
		}
		_, err = w.h.e.Trade(w.h.ctx, core.TradeRequest{Account: a, Market: m, Side: side, Shares: money.Amount(n), Sell: true})
	case k < 75:
		err = w.roundTrip(a, m)
	case k < 85:
		req := core.SplitRequest{Account: a, Market: m, Amount: w.shares(), Merge: w.r.IntN(2) == 0}
		if pair := min(heldShares(before, m, core.Yes), heldShares(before, m, core.No)); req.Merge && pair > 0 && w.r.IntN(8) != 0 {
			req.Amount = money.Amount(1 + w.r.Int64N(int64(pair)))
		}
		_, err = w.h.e.SplitMerge(w.h.ctx, req)
	case k < 88:
		err = w.h.e.SetReferrer(w.h.ctx, a, w.accts[w.r.IntN(len(w.accts))], money.Units(w.r.Int64N(100)))
	case k < 89:
		_, err = w.h.e.Settle(w.h.ctx, core.SettleRequest{Market: m, Outcome: core.Side(w.r.IntN(2))})
	case k < 90:
		w.h.clock.Advance(time.Duration(w.r.IntN(4)) * time.Hour)
		_, err = w.h.e.CloseDue(w.h.ctx)
	case k < 94:
		w.newMarket()
	default:
		w.accts = append(w.accts, w.h.account(fmt.Sprintf("acct%d", len(w.accts)), core.RoleSpeculator, w.r.Int64N(1000)))
	}
	if err != nil && !isDomain(err) {
		w.fail("step %d: %v", i, err)
	}
	if err == nil {
		w.ok++
	}
	after, _ := w.h.e.Account(a)
	mAfter, _ := w.h.e.Market(m)
	if err != nil && k(before, mBefore) != k(after, mAfter) {
		w.fail("step %d: refused with %v but changed LSNs", i, err)
	}
	w.cheapChecks(i, after, mAfter)
}

func k(a core.AccountView, m *core.MarketView) [2]uint64 { return [2]uint64{a.LSN, m.LSN} }

func heldShares(v core.AccountView, m uuid.UUID, side core.Side) money.Amount {
	for _, p := range v.Positions {
		if p.Market == m && p.Currency == money.KP {
			return p.Shares[side]
		}
	}
	return 0
}

// roundTrip buys n shares and sells them straight back: the sale must
// never return more than the purchase cost.
func (w *workload) roundTrip(a, m uuid.UUID) error {
	side := core.Side(w.r.IntN(2))
	n := w.shares()
	b, err := w.h.buy(a, m, side, n)
	if err != nil {
		return err
	}
	s, err := w.h.sell(a, m, side, n)
	if err != nil {
		w.fail("sell back %d shares just bought: %v", n, err)
	}
	if s.Cost > b.Cost {
		w.fail("bought %d for %s, sold back for %s", n, b.Cost, s.Cost)
	}
	return nil
}

// cheapChecks runs after every step on what the step touched.
func (w *workload) cheapChecks(i int, a core.AccountView, m *core.MarketView) {
	for cur := range money.NumCurrencies {
		l, n, _ := w.h.e.Ledger(a.ID, money.Currency(cur), 0, 1)
		if n > 0 && l[0].BalanceAfter != a.Balances[cur] {
			w.fail("step %d: account %s balance %s, last ledger entry %s", i, a.ID, a.Balances[cur], l[0].BalanceAfter)
		}
		if a.Balances[cur] < 0 {
			w.fail("step %d: negative balance %s", i, a.Balances[cur])
		}
	}
	b := &m.Books[money.KP]
	if b.Collateral < 0 || (m.Info.Status != core.StatusResolved && b.Collateral < b.Q[0]-m.Info.Q0+b.Splits) {
		w.fail("step %d: market %s collateral %s below what it owes", i, m.ID, b.Collateral)
	}
	py, pn := m.Prices(money.KP)
	v := m.Info.Alpha * 2 * math.Ln2
	const slack = 1e-12
	if !(py > 0 && pn > 0 && py < 1+v+slack && pn < 1+v+slack && py+pn >= 1-slack && py+pn <= 1+v+slack) {
		w.fail("step %d: prices %v %v with v %v at q %v", i, py, pn, v, b.Q)
	}
}
