package core

import (
	"slices"

	"github.com/google/uuid"
)

// lookupParts are the derived lookups rebuilt from the state, as if every
// object were new, in parts: each account part of the check (runChecks)
// rebuilds those of its own accounts while it walks them, so that each
// account is visited once and the rebuild is shared by the cores; the
// markets' go into the first part.
type lookupParts [checkParts]indexes

// init makes the parts' maps, the codes' and wallets' sized as a part of
// the kept ones: growing a map of 1,000,000 codes one insert at a time was
// most of the rebuild's time.
func (w *lookupParts) init(s *State) {
	s.idx.mu.Lock()
	codes, wallets := len(s.idx.codes), len(s.idx.wallets)
	s.idx.mu.Unlock()
	for i := range w {
		w[i].init()
		w[i].codes = make(map[codeKey]uuid.UUID, codes/len(w)+1)
		w[i].wallets = make(map[string]uuid.UUID, wallets/len(w)+1)
	}
}

// noInfo is the info every account has before its first change.
var noInfo AccountInfo

// addAccount adds what account a files in the lookups, and reports to c
// a referral code or wallet filed already for another account of the same
// part, and a deposit's transaction filed already for another deposit,
// not rejected, of the same part. Caller holds a.mu.
//
// Such a key is a drift the comparison with the kept lookup cannot see:
// the part's map keeps the later account or deposit, and a kept lookup
// naming it too matches entry for entry and in count (unionEqual counts a
// key in two parts twice, but one part's map holds it once). An address
// is linked to one account at a time, and a transaction is taken by one
// deposit until a rejection frees it (docs/ARCHITECTURE.md, "Custody:
// wallets, deposits and withdrawals"): a rejected deposit is never filed,
// so it and a later deposit of its transaction are not reported. Nothing
// is deleted from the codes or wallets here (noInfo has none), so one
// that leaves their count as it was is a duplicate: a length compared,
// where a lookup before the insert would hash every code and wallet twice
// over 1,000,000 accounts at recovery; transfer compares the deposits'
// the same way, one insert at a time, since a rejection can delete.
func (x *indexes) addAccount(a *account, c *checker) {
	codes, wallets := len(x.codes), len(x.wallets)
	ch := AccountChange{Info: &a.info}
	x.account(a.id, &noInfo, &ch)
	if len(x.codes) == codes {
		if _, ok := codeKeyOf(a.info.ReferralCode); ok { // the house has none
			c.failf(invLookups, "lookups: account %s's referral code %s is another account's too", a.id, a.info.ReferralCode)
		}
	}
	if len(x.wallets) == wallets && a.info.Wallet != "" {
		c.failf(invLookups, "lookups: account %s's wallet %s is another account's too", a.id, a.info.Wallet)
	}
	for _, t := range a.transfers {
		if x.transfer(a.id, t) {
			c.failf(invLookups, "lookups: account %s's deposit %s has tx hash %s, another deposit's too", a.id, t.ID, t.TxHash)
		}
	}
}

// checkIndexes compares the kept lookups with the parts rebuilt from the
// accounts (want, by runChecks' walk) and the markets, and reports where
// they differ: a lookup that drifted from the state would answer for
// objects that are not there.
func (s *State) checkIndexes(c *checker, want *lookupParts) {
	s.rangeMarkets(func(m *market) bool {
		v := m.view.Load()
		want[0].market(v.ID, true, &MarketChange{Info: v.Info, Proposals: v.Proposals})
		return true
	})
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	got := &s.idx
	if !unionEqual(got.codes, want, func(x *indexes) map[codeKey]uuid.UUID { return x.codes }) ||
		!unionEqual(got.wallets, want, func(x *indexes) map[string]uuid.UUID { return x.wallets }) ||
		!unionEqual(got.txs, want, func(x *indexes) map[string]txRef { return x.txs }) ||
		!unionEqual(got.proposals, want, func(x *indexes) map[uuid.UUID]uuid.UUID { return x.proposals }) ||
		!unionEqual(got.open, want, func(x *indexes) map[uuid.UUID]uuid.UUID { return x.open }) {
		c.failf(invLookups, "lookups of codes, wallets, deposits or proposals differ from the state")
	}
	if !sameSets(got.referees, joinSets(want, func(x *indexes) map[uuid.UUID][]uuid.UUID { return x.referees })) ||
		!sameSets(got.created, joinSets(want, func(x *indexes) map[uuid.UUID][]uuid.UUID { return x.created })) {
		c.failf(invLookups, "lookups of referees or created markets differ from the state")
	}
}

// unionEqual reports whether got holds exactly the entries of the parts'
// maps (of(part)) together. A key in two parts (two accounts with one
// referral code) counts twice, so that the union's size cannot match; two
// in one part, addAccount reports.
func unionEqual[K, V comparable](got map[K]V, parts *lookupParts, of func(*indexes) map[K]V) bool {
	n := 0
	for i := range parts {
		part := of(&parts[i])
		n += len(part)
		for k, v := range part {
			if g, ok := got[k]; !ok || g != v {
				return false
			}
		}
	}
	return n == len(got)
}

// joinSets joins the parts' multimaps (of(part)) into one.
func joinSets(parts *lookupParts, of func(*indexes) map[uuid.UUID][]uuid.UUID) map[uuid.UUID][]uuid.UUID {
	out := of(&parts[0])
	for i := 1; i < len(parts); i++ {
		for k, ids := range of(&parts[i]) {
			out[k] = append(out[k], ids...)
		}
	}
	return out
}

// sameSets reports whether two multimaps hold the same IDs per key,
// whatever their order.
func sameSets(a, b map[uuid.UUID][]uuid.UUID) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || len(va) != len(vb) {
			return false
		}
		sa, sb := slices.Clone(va), slices.Clone(vb)
		slices.SortFunc(sa, compareIDs)
		slices.SortFunc(sb, compareIDs)
		if !slices.Equal(sa, sb) {
			return false
		}
	}
	return true
}
