package core

import (
	"maps"
	"slices"

	"github.com/google/uuid"
)

// checkIndexes rebuilds the derived lookups from the accounts and markets
// and reports where the kept ones differ: a lookup that drifted from the
// state would answer for objects that are not there.
func (s *State) checkIndexes(c *checker) {
	var want indexes // built from scratch, as if every object were new
	want.init()
	// Sized as the kept lookups: growing a map of 1,000,000 codes one
	// insert at a time was most of the rebuild's time.
	s.idx.mu.Lock()
	want.codes = make(map[codeKey]uuid.UUID, len(s.idx.codes))
	want.wallets = make(map[string]uuid.UUID, len(s.idx.wallets))
	s.idx.mu.Unlock()
	var none AccountInfo // every account's info is new to want
	s.eachAccountLocked(0, 1, func(a *account) {
		ch := AccountChange{Info: &a.info, Transfers: a.transfers}
		want.account(a.id, &none, &ch)
	})
	s.rangeMarkets(func(m *market) bool {
		v := m.view.Load()
		want.market(v.ID, true, &MarketChange{Info: v.Info, Proposals: v.Proposals})
		return true
	})
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	got := &s.idx
	if !maps.Equal(got.codes, want.codes) || !maps.Equal(got.wallets, want.wallets) ||
		!maps.Equal(got.txs, want.txs) || !maps.Equal(got.proposals, want.proposals) || !maps.Equal(got.open, want.open) {
		c.failf(invLookups, "lookups of codes, wallets, deposits or proposals differ from the state")
	}
	if !sameSets(got.referees, want.referees) || !sameSets(got.created, want.created) {
		c.failf(invLookups, "lookups of referees or created markets differ from the state")
	}
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
