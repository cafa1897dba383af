package core

import (
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/core/pricing"
)

// maxReported bounds how many violations Check lists.
const maxReported = 20

// Check verifies the invariants of the whole state and returns every
// violation it finds (up to a bound), joined; nil when all hold:
//   - conservation per currency (docs/ARCHITECTURE.md, "Invariants"): all balances, the
//     house's included, plus all market collateral plus the bonds of open
//     oracle proposals (KP) equal minted minus burned;
//   - a market has at most one open oracle proposal, and none once resolved;
//   - per unresolved market, currency and side, the shares held equal
//     q - q0 (plus the sets split at par before splits moved to the curve),
//     q never below q0, and the collateral covers what the market owes
//     whichever side wins and C(q), rounded for the house; in the middle of
//     a settlement, the shares held plus those its steps closed (paid, on
//     the winning side) equal that, and the collateral covers the winning
//     shares still held;
//   - a market not closing or settling has a zero Step, or one of an
//     oracle notification (a Step with a Note);
//   - a resolved market holds no collateral and nobody holds its shares;
//   - every ledger chain is consistent: each entry's balance_after is the
//     previous one plus its amount, starting from zero, ending at the
//     balance; shares and cost bases are never negative;
//   - the derived lookups (referral codes, wallets, deposits, referees,
//     created markets, proposals) equal a rebuild from the state;
//   - every account's leaderboard aggregates (volume and bonuses in KP)
//     equal a recomputation from its KP ledger.
//
// It reads a quiescent state: call it at recovery, in tests, or on a state
// loaded from a snapshot, not while an engine is trading on it.
func (s *State) Check() error {
	c := s.runChecks()
	if c.dropped > 0 {
		c.errs = append(c.errs, fmt.Errorf("core: %d more invariant violations", c.dropped))
	}
	return errors.Join(c.errs...)
}

// runChecks runs every check of Check and returns the checker holding its
// findings.
//
// The accounts are checked in checkParts parts at once, each part with a
// checker of its own merged at the end, and each rebuilding the lookups of
// its accounts as it walks them: at recovery the check of 1,000,000
// accounts ran on one goroutine for 1.2 s (CPU profile of
// TestScaleTimeToReady, a third of it the lookups' rebuild), on a machine
// whose other cores were idle by then, and later the lookups' rebuild on a
// goroutine of its own beside the parts was the longest of them
// (docs/PERFORMANCE.md, "The time to ready's walks over the accounts").
func (s *State) runChecks() *checker {
	s.publishDirty()
	c := newChecker()
	var parts [checkParts]*checker
	var want lookupParts
	want.init(s)
	var wg sync.WaitGroup
	for i := range parts {
		p, w := newChecker(), &want[i]
		parts[i] = p
		wg.Go(func() {
			s.eachAccountLocked(i, len(parts), func(a *account) {
				p.account(a)
				w.addAccount(a, p)
			})
		})
	}
	wg.Wait()
	for _, p := range parts {
		c.merge(p)
	}
	s.rangeMarkets(func(m *market) bool {
		c.market(m.freshView())
		return true
	})
	s.checkIndexes(c, &want)
	// The walks above go over the accounts' memory, not the map that
	// finds them by ID: an account findable but never stored by a change
	// (its LSN 0) would be left out of every check.
	if n := s.accounts.len(); c.accounts != n {
		c.failf(invLookups, "%d accounts findable by ID, %d stored by a change and checked", n, c.accounts)
	}
	for k := range c.held {
		if s.market(k.market) == nil {
			c.failf(invPositions, "position in unknown market %s", k.market)
		}
	}
	s.supply.mu.Lock()
	minted, burned := s.supply.minted, s.supply.burned
	s.supply.mu.Unlock()
	for cur := range money.NumCurrencies {
		want := c.s.sub(minted[cur], burned[cur])
		if total := c.s.add(c.s.add(c.balances[cur], c.collateral[cur]), c.bonds[cur]); total != want {
			c.failf(invConservation, "conservation %s: balances %s + collateral %s + oracle bonds and stakes %s = %s, minted-burned %s",
				money.Currency(cur), c.balances[cur], c.collateral[cur], c.bonds[cur], total, want)
		}
	}
	if c.s.err != nil {
		c.failf(invOverflow, "overflow: %v", c.s.err)
	}
	return c
}

// posKey names the shares held in one market's book in one currency, which
// the checker sums over the accounts.
type posKey struct {
	market   uuid.UUID
	currency money.Currency
}

type checker struct {
	counts [numInvariants]int // violations found, by invariant
	s      sums
	// The three parts of conservation's left side, per currency: all
	// balances, all market collateral, the bonds held by oracle proposals
	// (KP only).
	balances, collateral, bonds [money.NumCurrencies]money.Amount
	held                        map[posKey][NumSides]money.Amount
	errs                        []error
	dropped                     int
	accounts                    int // accounts checked
}

// checkParts is how many goroutines check the accounts at once.
const checkParts = 2

func newChecker() *checker {
	return &checker{held: make(map[posKey][NumSides]money.Amount)}
}

// merge adds what o found to c: its sums, its positions held and its
// violations, after c's own.
func (c *checker) merge(o *checker) {
	for i := range c.counts {
		c.counts[i] += o.counts[i]
	}
	c.s.keep(o.s.err)
	for cur := range money.NumCurrencies {
		c.balances[cur] = c.s.add(c.balances[cur], o.balances[cur])
		c.collateral[cur] = c.s.add(c.collateral[cur], o.collateral[cur])
		c.bonds[cur] = c.s.add(c.bonds[cur], o.bonds[cur])
	}
	for k, h := range o.held {
		ch := c.held[k]
		for side := range NumSides {
			ch[side] = c.s.add(ch[side], h[side])
		}
		c.held[k] = ch
	}
	for _, err := range o.errs {
		if len(c.errs) >= maxReported {
			c.dropped++
			continue
		}
		c.errs = append(c.errs, err)
	}
	c.dropped += o.dropped
	c.accounts += o.accounts
}

func (c *checker) failf(inv invariant, format string, args ...any) {
	c.counts[inv]++
	if len(c.errs) >= maxReported {
		c.dropped++
		return
	}
	c.errs = append(c.errs, fmt.Errorf("core: invariant: "+format, args...))
}

func (c *checker) account(a *account) {
	c.accounts++
	for cur := range money.NumCurrencies {
		c.balances[cur] = c.s.add(c.balances[cur], a.balances[cur])
		var bal money.Amount
		led := a.refs().ledger[cur].snapshot()
		for i, l := range led.all() {
			bal = c.s.add(bal, l.Amount)
			if l.BalanceAfter != bal || l.Currency != money.Currency(cur) {
				c.failf(invLedger, "account %s ledger %s entry %d: balance_after %s, chain gives %s", a.id, money.Currency(cur), i, l.BalanceAfter, bal)
				break
			}
		}
		if bal != a.balances[cur] {
			c.failf(invLedger, "account %s %s: balance %s, ledger ends at %s", a.id, money.Currency(cur), a.balances[cur], bal)
		}
	}
	kp := a.refs().ledger[money.KP].snapshot()
	if v, b := ledgerAggregates(&kp); v != a.volumeKP || b != a.bonusesKP {
		c.failf(invAggregates, "account %s: volume %s and bonuses %s kept, ledger gives %s and %s", a.id, a.volumeKP, a.bonusesKP, v, b)
	}
	if err := a.refs().positions.check(); err != nil {
		c.failf(invPositions, "account %s: positions: %v", a.id, err)
	}
	for p := range a.refs().positions.all() {
		k := posKey{p.Market, p.Currency}
		h := c.held[k]
		for side := range NumSides {
			if p.Shares[side] < 0 || p.Cost[side] < 0 {
				c.failf(invPositions, "account %s market %s: negative shares or cost %v %v", a.id, p.Market, p.Shares, p.Cost)
			}
			h[side] = c.s.add(h[side], p.Shares[side])
		}
		c.held[k] = h
	}
}

func (c *checker) market(v *MarketView) {
	open := 0
	for i := range v.Proposals {
		p := &v.Proposals[i]
		// Bonds and the vote stakes not paid out yet: KP held by the
		// proposal, outside every account.
		c.bonds[money.KP] = c.s.add(c.bonds[money.KP], p.HeldBonds())
		c.bonds[money.KP] = c.s.add(c.bonds[money.KP], p.HeldStakes())
		if p.Status.Open() {
			open++
		}
		c.stakes(v, p)
	}
	if open > 1 || open == 1 && v.Info.Status == StatusResolved {
		c.failf(invProposals, "market %s (%s): %d open proposals", v.ID, v.Info.Status, open)
	}
	if s := v.Info.Status; s != StatusClosing && s != StatusSettling && v.Info.Step != (Step{}) && v.Info.Step.Note.Kind == 0 {
		c.failf(invPositions, "market %s (%s): step in progress %+v", v.ID, s, v.Info.Step)
	}
	for cur := range money.NumCurrencies {
		key := posKey{v.ID, money.Currency(cur)}
		held, holders := c.held[key]
		if !v.Open[cur] {
			if holders {
				c.failf(invPositions, "market %s: positions in %s, which has no book", v.ID, money.Currency(cur))
			}
			continue
		}
		b := &v.Books[cur]
		c.collateral[cur] = c.s.add(c.collateral[cur], b.Collateral)
		if v.Info.Status == StatusResolved {
			if b.Collateral != 0 || holders {
				c.failf(invCollateral, "market %s %s resolved with collateral %s, holders %v", v.ID, money.Currency(cur), b.Collateral, holders)
			}
			continue
		}
		// In the middle of a settlement the steps have closed some
		// positions (Step.Closed); paid plus held is still what the market
		// owes, and the collateral covers the winners not yet paid.
		settling := v.Info.Status == StatusSettling
		var owed money.Amount
		for side := range NumSides {
			want := c.s.add(c.s.sub(b.Q[side], v.Info.Q0), b.Splits)
			if got := c.s.add(held[side], v.Info.Step.Closed[cur][side]); got != want {
				c.failf(invPositions, "market %s %s %s: held %s and closed %s, q-q0+splits %s", v.ID, money.Currency(cur), Side(side),
					held[side], v.Info.Step.Closed[cur][side], want)
			}
			if b.Q[side] < v.Info.Q0 {
				c.failf(invPositions, "market %s %s: q_%s %s below q0 %s", v.ID, money.Currency(cur), Side(side), b.Q[side], v.Info.Q0)
			}
			if !settling || Side(side) == v.Info.Outcome {
				owed = max(owed, held[side])
			}
		}
		if b.Collateral < owed {
			c.failf(invCollateral, "market %s %s: collateral %s below owed %s", v.ID, money.Currency(cur), b.Collateral, owed)
		}
		// Covering what is held is not enough: a market whose collateral
		// falls below C(q) has paid out more than the curve allows, as
		// when sets bought at par were sold on the curve (docs/API.md,
		// "Split and merge"). Sets split at par before splits moved to the
		// curve are held outside q, paid in at 1 each.
		// A settlement's steps pay out of the collateral while q stays:
		// only what is still held is owed then (above).
		if settling {
			continue
		}
		if inCurveRange(v.Info.Alpha, b.Q) {
			if need := c.s.add(pricing.MinCollateral(v.Info.Alpha, b.Q), b.Splits); b.Collateral < need {
				c.failf(invCurve, "market %s %s: collateral %s below C(q) %s at q %v (par sets %s)", v.ID, money.Currency(cur), b.Collateral, need, b.Q, b.Splits)
			}
		} else {
			c.failf(invCurve, "market %s %s: alpha %v or q %v out of range", v.ID, money.Currency(cur), v.Info.Alpha, b.Q)
		}
	}
}

// stakes checks a proposal's stakes against its votes: each side's stake
// is the sum of its votes' stakes, no more is paid than was staked, and
// the cursor of the payouts stays within the votes.
func (c *checker) stakes(v *MarketView, p *Proposal) {
	var sum [NumSides]money.Amount
	var n uint64
	for _, vote := range v.Votes {
		if vote.Proposal == p.ID {
			sum[vote.Outcome] = c.s.add(sum[vote.Outcome], vote.Stake)
			n++
		}
	}
	if sum != p.Stakes || p.StakesPaid < 0 || p.HeldStakes() < 0 || p.StakeCursor > n {
		c.failf(invProposals, "market %s proposal %s: stakes %v, votes' stakes %v, paid %s, cursor %d of %d votes",
			v.ID, p.ID, p.Stakes, sum, p.StakesPaid, p.StakeCursor, n)
	}
}

// ledgerAggregates recomputes from a KP ledger what appendLedger keeps.
func ledgerAggregates(kp *listView[ledgerSlot]) (volume, bonuses money.Amount) {
	for _, l := range kp.all() {
		volume, bonuses = addToAggregates(volume, bonuses, l.Type, l.Amount)
	}
	return volume, bonuses
}

// inCurveRange reports whether alpha and q are in the pricing package's
// range, so that the checker reports a corrupt state rather than panic on it.
func inCurveRange(alpha float64, q [NumSides]money.Amount) bool {
	return alpha >= pricing.MinAlpha && alpha <= pricing.MaxAlpha &&
		q[Yes] >= 1 && q[No] >= 1 && q[Yes] <= pricing.MaxQ && q[No] <= pricing.MaxQ
}
