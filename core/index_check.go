package core

import (
	"slices"
	"strings"

	"github.com/google/uuid"
)

// lookupParts are the derived lookups rebuilt from the state, as if every
// object were new, in parts: each account part of the check (runChecks)
// rebuilds those of its own accounts while it walks them, so that each
// account is visited once and the rebuild is shared by the cores; the
// markets' go into the first part. The referral codes are not rebuilt but
// looked up (lookupPart).
type lookupParts [checkParts]lookupPart

// lookupPart is one part's rebuild. Its indexes' codes map stays empty:
// each account's code is looked up in the kept lookup instead (kept), and
// counted (codes). Rebuilding the codes of 1,000,000 accounts into maps
// of their own, then looking each up in the kept one to compare, was a
// map insert, an iteration and a lookup per account, all cache misses
// (docs/PERFORMANCE.md, "The check's referral codes by lookups").
type lookupPart struct {
	indexes
	kept  map[codeKey]uuid.UUID // the kept codes lookup, read only while the parts run
	codes int                   // accounts of the part with a code
}

// init makes the parts' maps, the wallets' sized as a part of the kept
// one: growing a map of 1,000,000 entries one insert at a time was most of
// the rebuild's time.
func (w *lookupParts) init(s *State) {
	s.idx.mu.Lock()
	kept, wallets := s.idx.codes, len(s.idx.wallets)
	s.idx.mu.Unlock()
	for i := range w {
		w[i].indexes.init()
		w[i].wallets = make(map[string]uuid.UUID, wallets/len(w)+1)
		w[i].kept = kept
	}
}

// addAccount adds what account a files in the lookups, as indexes.account
// files a new account's, and reports to c a referral code the kept lookup
// does not file for a, a wallet filed already for another account of the
// same part, and a deposit's transaction filed already for another
// deposit, not rejected, of the same part. Caller holds a.mu.
//
// A code is checked by a lookup: every account's code filed for it, and
// as many codes kept as accounts with one (checkIndexes), is the kept
// lookup equal to the rebuild, two accounts with one code included (the
// code is filed for one of them only). A wallet or transaction filed
// twice in one part is a drift the comparison with the kept lookup cannot
// see: the part's map keeps the later account or deposit, and a kept
// lookup naming it too matches entry for entry and in count (unionEqual
// counts a key in two parts twice, but one part's map holds it once). An
// address is linked to one account at a time, and a transaction is taken
// by one deposit until a rejection frees it (docs/ARCHITECTURE.md,
// "Custody: wallets, deposits and withdrawals"): a rejected deposit is
// never filed, so it and a later deposit of its transaction are not
// reported. Nothing is deleted from the wallets here, so an insert that
// leaves their count as it was is a duplicate: a length compared, where a
// lookup before the insert would hash every wallet twice; transfer
// compares the deposits' the same way, one insert at a time, since a
// rejection can delete.
func (x *lookupPart) addAccount(a *account, c *checker) {
	in := a.infoOf()
	if k, ok := codeKeyOf(in.ReferralCode); ok { // the house has none
		x.codes++
		if id, ok := x.kept[k]; !ok || id != a.id {
			c.failf(invLookups, "lookups: account %s's referral code %s is not filed for it", a.id, in.ReferralCode)
		}
	}
	if in.Wallet != "" {
		n := len(x.wallets)
		x.wallets[strings.ToLower(in.Wallet)] = a.id
		if len(x.wallets) == n {
			c.failf(invLookups, "lookups: account %s's wallet %s is another account's too", a.id, in.Wallet)
		}
	}
	if in.Referrer != uuid.Nil {
		x.referees[in.Referrer] = append(x.referees[in.Referrer], a.id)
	}
	for _, t := range a.transfers() {
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
	codes := 0
	for i := range want {
		codes += want[i].codes
	}
	if codes != len(got.codes) ||
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
// wallet) counts twice, so that the union's size cannot match; two in one
// part, addAccount reports.
func unionEqual[K, V comparable](got map[K]V, parts *lookupParts, of func(*indexes) map[K]V) bool {
	n := 0
	for i := range parts {
		part := of(&parts[i].indexes)
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
	out := of(&parts[0].indexes)
	for i := 1; i < len(parts); i++ {
		for k, ids := range of(&parts[i].indexes) {
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
