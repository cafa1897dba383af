package core

import (
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// checkIndexes rebuilds the derived lookups from the accounts and markets
// and reports where the kept ones differ: a lookup that drifted from the
// state would answer for objects that are not there.
func (s *State) checkIndexes(c *checker) {
	var want indexes
	want.init()
	s.rangeAccounts(func(a *account) bool {
		a.mu.Lock()
		ch := AccountChange{Info: &a.info, Transfers: a.transfers}
		a.mu.Unlock()
		s.indexInto(&want, a.id, ch)
		return true
	})
	s.rangeMarkets(func(m *market) bool {
		v := m.view.Load()
		want.created[v.Info.Creator] = append(want.created[v.Info.Creator], v.ID)
		for _, p := range v.Proposals {
			want.proposals[p.ID] = v.ID
		}
		return true
	})
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	got := &s.idx
	if !maps.Equal(got.codes, want.codes) || !maps.Equal(got.wallets, want.wallets) ||
		!maps.Equal(got.txs, want.txs) || !maps.Equal(got.proposals, want.proposals) {
		c.failf("lookups of codes, wallets, deposits or proposals differ from the state")
	}
	if !sameSets(got.referees, want.referees) || !sameSets(got.created, want.created) {
		c.failf("lookups of referees or created markets differ from the state")
	}
}

// indexInto adds one account's lookups to x.
func (s *State) indexInto(x *indexes, id uuid.UUID, ch AccountChange) {
	in := ch.Info
	if in.ReferralCode != "" {
		x.codes[in.ReferralCode] = id
	}
	if in.Wallet != "" {
		x.wallets[strings.ToLower(in.Wallet)] = id
	}
	if in.Referrer != uuid.Nil {
		x.referees[in.Referrer] = append(x.referees[in.Referrer], id)
	}
	for _, t := range ch.Transfers {
		if t.Kind == TransferDeposit {
			x.txs[strings.ToLower(t.TxHash)] = txRef{id, t.ID}
		}
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
