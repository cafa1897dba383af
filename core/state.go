package core

import (
	"sync"

	"github.com/google/uuid"

	"marketd/core/money"
)

// State is the whole in-memory state: accounts, markets, keys, sessions and
// the money supply. It is built empty, filled from a snapshot and the log
// (LoadImage, Apply) by one goroutine, then handed to an Engine, which owns
// it from then on.
//
// Every object carries an LSN, the sequence number of the last record that
// changed it. Replay applies a record to an object only when the object's
// LSN is below the record's, and only when it equals the Prev the record
// names; that is what lets a snapshot be taken while trading goes on (see
// docs/ARCHITECTURE.md).
type State struct {
	accounts idMap[account, accountRefs]
	// accountMem holds the accounts themselves (arena.go).
	accountMem arena[account, accountRefs]

	namesMu sync.Mutex
	names   map[nameKey]uuid.UUID // lower-case name -> account; guarded by namesMu

	markets idMap[market, struct{}]
	// marketMem holds the markets themselves.
	marketMem arena[market, struct{}]

	// dirty are the markets replay changed without publishing their views:
	// publishing after every record cost a quarter of replay. Only the
	// replaying goroutine touches it; publishDirty empties it.
	dirty []*market

	// replayAccts and replayMkts are Apply's lookup buffers, reused.
	replayAccts []*account
	replayMkts  []*market

	auth authTable

	supply supply

	// idx holds the derived lookups (index.go).
	idx indexes

	// custodyMu serialises the operations that check a lookup of idx and
	// then change it: linking a wallet (one account per address) and
	// crediting a deposit (once per transaction). Its place in the lock
	// order: doc.go, "Lock order".
	custodyMu sync.Mutex

	// idemLimits are the idempotency keys' retention and cap, by which
	// applying a record drops expired keys (idempotency.go): none while
	// the state replays, the engine's from NewEngine on.
	idemLimits IdempotencyLimits
}

// supply is the minted and burned totals per currency: what the
// conservation invariant compares all balances against.
type supply struct {
	mu     sync.Mutex
	lsn    uint64
	minted [money.NumCurrencies]money.Amount
	burned [money.NumCurrencies]money.Amount
}

// NewState returns an empty state holding only the house account.
func NewState() *State {
	s := &State{names: make(map[nameKey]uuid.UUID)}
	s.accounts.mem, s.markets.mem = &s.accountMem, &s.marketMem
	s.auth.init()
	s.idx.init()
	house := s.newAccount(HouseID)
	house.setInfo(&AccountInfo{Name: "house", Role: RoleAdmin})
	s.accounts.store(HouseID, house.ref)
	return s
}

// newAccount returns a new, empty account with ID id, not yet findable:
// addAccount or accounts.store makes it so.
func (s *State) newAccount(id uuid.UUID) *account {
	return s.accountMem.alloc(func(a *account, ref arenaRef) { a.id, a.ref, a.placed = id, ref, true })
}

func (s *State) account(id uuid.UUID) *account {
	a, _ := s.accounts.load(id)
	return a
}

func (s *State) market(id uuid.UUID) *market {
	m, _ := s.markets.load(id)
	return m
}

// addAccount makes a new account findable by ID and by name.
func (s *State) addAccount(a *account) {
	s.accounts.store(a.id, a.ref)
	s.namesMu.Lock()
	s.nameStore(a.name(), a.id)
	s.namesMu.Unlock()
}

// addMarket makes a new market findable. The market's view must be
// published first.
func (s *State) addMarket(m *market) { s.markets.store(m.id, m.ref) }

// nameLookup returns the account named name, ignoring case. Caller holds
// namesMu, or owns the state alone (recovery).
func (s *State) nameLookup(name string) (uuid.UUID, bool) {
	k, ok := nameKeyOf(name)
	if !ok {
		return uuid.Nil, false
	}
	id, ok := s.names[k]
	return id, ok
}

// nameStore makes account id findable by name. A name longer than any
// valid one cannot be keyed, and no lookup could match it. Caller holds
// namesMu, or owns the state alone (recovery).
func (s *State) nameStore(name string, id uuid.UUID) {
	if k, ok := nameKeyOf(name); ok {
		s.names[k] = id
	}
}

// newMarket returns a new, empty market with ID id, not yet findable:
// addMarket makes it so.
func (s *State) newMarket(id uuid.UUID) *market {
	return s.marketMem.alloc(func(m *market, ref arenaRef) {
		m.id, m.ref, m.holders = id, ref, make(map[uuid.UUID]struct{})
	})
}

// rangeAccounts calls fn for every account until it returns false.
func (s *State) rangeAccounts(fn func(*account) bool) { s.accounts.rangeValues(fn) }

// eachAccountLocked calls fn, with a.mu held, for every account of the
// state in part part of parts (arena.eachPart), in memory order.
// The walks over every account at recovery (the state's check, the
// engine's start) use it rather than rangeAccounts: in the account map's
// order each account's lines are cache misses the processor cannot
// foresee, and a walk over 1,000,000 accounts cost a miss per line it
// read (docs/PERFORMANCE.md, "The time to ready's walks over the
// accounts"); in memory order its prefetchers bring them in ahead.
func (s *State) eachAccountLocked(part, parts int, fn func(a *account)) {
	s.accountMem.eachPart(part, parts, func(a *account) bool {
		a.mu.Lock()
		if a.stored() {
			fn(a)
		}
		a.mu.Unlock()
		return true
	})
}

// rangeMarkets calls fn for every market until it returns false.
func (s *State) rangeMarkets(fn func(*market) bool) { s.markets.rangeValues(fn) }

// markDirty notes a market whose view replay has not published yet.
func (s *State) markDirty(m *market) {
	if !m.dirty {
		m.dirty = true
		s.dirty = append(s.dirty, m)
	}
}

// publishDirty publishes the views of the markets replay changed, and
// their last applied LSN (market.applyChange). Every reader of views on a
// quiescent state (Check, Capture, NewEngine) calls it first; on a live
// state nothing is dirty.
func (s *State) publishDirty() {
	for _, m := range s.dirty {
		m.dirty = false
		m.lag.applied.Store(m.lsn)
		m.publish()
	}
	s.dirty = nil
}
