package core

import (
	"maps"
	"strings"
	"sync"

	"github.com/google/uuid"
)

// indexes are lookups derived from the accounts and markets, never logged:
// every change to what they index goes through indexAccount or indexMarket,
// live (commit) and at recovery (Apply, LoadImage) alike, so they cannot
// drift from the state. mu is a leaf of the lock order (doc.go, "Lock
// order"). An operation that must check a lookup and change it atomically
// (a wallet linked once, a deposit credited once) serialises on
// State.custodyMu instead.
type indexes struct {
	mu        sync.Mutex
	codes     map[codeKey]uuid.UUID     // referral code -> account (lookup_keys.go)
	wallets   map[string]uuid.UUID      // lower-case wallet address -> account
	txs       map[string]txRef          // lower-case deposit tx hash -> deposit
	open      map[uuid.UUID]uuid.UUID   // pending deposit or queued withdrawal -> its account
	referees  map[uuid.UUID][]uuid.UUID // referrer -> accounts it referred
	created   map[uuid.UUID][]uuid.UUID // creator -> markets it created
	proposals map[uuid.UUID]uuid.UUID   // oracle proposal -> market
}

// txRef finds a deposit: its account and transfer ID.
type txRef struct {
	account  uuid.UUID
	transfer uuid.UUID
}

func (x *indexes) init() {
	x.codes = make(map[codeKey]uuid.UUID)
	x.wallets = make(map[string]uuid.UUID)
	x.txs = make(map[string]txRef)
	x.open = make(map[uuid.UUID]uuid.UUID)
	x.referees = make(map[uuid.UUID][]uuid.UUID)
	x.created = make(map[uuid.UUID][]uuid.UUID)
	x.proposals = make(map[uuid.UUID]uuid.UUID)
}

// indexAccount updates the lookups for a change applied to account id;
// old is the account's info before it, nil for the zero info (a new
// account, or a change without one, whose info the lookups do not read):
// a pointer, since the info's copy was about 30 instructions of every
// trade (docs/PERFORMANCE.md, "The trade's own instructions").
func (s *State) indexAccount(id uuid.UUID, old *AccountInfo, ch *AccountChange) {
	if ch.Info == nil && len(ch.Transfers) == 0 && len(ch.TransferUpdates) == 0 {
		return
	}
	if old == nil {
		old = new(AccountInfo)
	}
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	s.idx.account(id, old, ch)
}

// account updates x for a change applied to account id (see indexAccount).
// Caller holds x.mu, or owns x alone (recovery).
func (x *indexes) account(id uuid.UUID, old *AccountInfo, ch *AccountChange) {
	if in := ch.Info; in != nil {
		if in.ReferralCode != old.ReferralCode {
			if k, ok := codeKeyOf(old.ReferralCode); ok {
				delete(x.codes, k)
			}
			if k, ok := codeKeyOf(in.ReferralCode); ok {
				x.codes[k] = id
			}
		}
		if in.Wallet != old.Wallet {
			if old.Wallet != "" {
				delete(x.wallets, strings.ToLower(old.Wallet))
			}
			if in.Wallet != "" {
				x.wallets[strings.ToLower(in.Wallet)] = id
			}
		}
		if in.Referrer != old.Referrer && in.Referrer != uuid.Nil {
			x.referees[in.Referrer] = append(x.referees[in.Referrer], id)
		}
	}
	for _, ts := range [2][]Transfer{ch.Transfers, ch.TransferUpdates} {
		for _, t := range ts {
			x.transfer(id, t)
		}
	}
}

// transfer files a transfer of account id, new or updated: a deposit's
// transaction is taken unless the deposit was rejected, which frees it
// (docs/API.md, "Custody"); a pending deposit or queued withdrawal is open
// for an admin. The caller holds x.mu or owns x alone.
//
// It reports whether the transfer is a deposit, not rejected, whose
// transaction the lookup held already: live, that is the deposit's own
// entry when an update files it again, which no caller minds; in the
// check's rebuild, which files each transfer once, it is another deposit's
// (addAccount). A length compared around the one insert, so that no
// transaction is hashed twice; no delete falls between the two.
func (x *indexes) transfer(id uuid.UUID, t Transfer) (taken bool) {
	if t.Kind == TransferDeposit {
		hash := strings.ToLower(t.TxHash)
		if t.Status != TransferRejected {
			n := len(x.txs)
			x.txs[hash] = txRef{id, t.ID}
			taken = len(x.txs) == n
		} else if r, ok := x.txs[hash]; ok && r.transfer == t.ID {
			delete(x.txs, hash)
		}
	}
	if t.Status.Open() {
		x.open[t.ID] = id
	} else {
		delete(x.open, t.ID)
	}
	return taken
}

// indexMarket updates the lookups for a change applied to market id;
// created says whether the change created it.
func (s *State) indexMarket(id uuid.UUID, created bool, ch *MarketChange) {
	if !created && len(ch.Proposals) == 0 {
		return
	}
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	s.idx.market(id, created, ch)
}

// market updates x for a change applied to market id (see indexMarket).
// Caller holds x.mu, or owns x alone (recovery).
func (x *indexes) market(id uuid.UUID, created bool, ch *MarketChange) {
	if created && ch.Info != nil {
		x.created[ch.Info.Creator] = append(x.created[ch.Info.Creator], id)
	}
	for _, p := range ch.Proposals {
		x.proposals[p.ID] = id
	}
}

// transferAccount finds the account of an open transfer (a pending
// deposit or a queued withdrawal).
func (s *State) transferAccount(id uuid.UUID) (uuid.UUID, bool) {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	a, ok := s.idx.open[id]
	return a, ok
}

// openTransfers returns a copy of the open transfers' lookup: transfer ->
// account.
func (s *State) openTransfers() map[uuid.UUID]uuid.UUID {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	return maps.Clone(s.idx.open)
}

// accountByCode finds the account of a referral code.
func (s *State) accountByCode(code string) (uuid.UUID, bool) {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	k, ok := codeKeyOf(code)
	if !ok {
		return uuid.Nil, false
	}
	id, ok := s.idx.codes[k]
	return id, ok
}

// accountByWallet finds the account a wallet address is linked to.
func (s *State) accountByWallet(addr string) (uuid.UUID, bool) {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	id, ok := s.idx.wallets[strings.ToLower(addr)]
	return id, ok
}

// depositByTx finds the deposit credited for a transaction hash.
func (s *State) depositByTx(hash string) (txRef, bool) {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	r, ok := s.idx.txs[strings.ToLower(hash)]
	return r, ok
}

// referees returns the accounts referrer referred, in no set order (a
// snapshot loads accounts in any order).
func (s *State) referees(referrer uuid.UUID) []uuid.UUID {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	r := s.idx.referees[referrer]
	return r[:len(r):len(r)]
}

// createdMarkets returns the markets an account created, in no set order.
func (s *State) createdMarkets(creator uuid.UUID) []uuid.UUID {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	c := s.idx.created[creator]
	return c[:len(c):len(c)]
}

// proposalMarket finds the market of an oracle proposal.
func (s *State) proposalMarket(proposal uuid.UUID) (uuid.UUID, bool) {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	id, ok := s.idx.proposals[proposal]
	return id, ok
}
