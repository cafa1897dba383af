package core

import (
	"sync"

	"github.com/google/uuid"

	"marketd/core/money"
)

// RecentTradesKept is how many of an account's trades it keeps for its
// profile (decisions.md section 11: the last 20).
const RecentTradesKept = 20

// posKey names a position: a market and a currency.
type posKey struct {
	market   uuid.UUID
	currency money.Currency
}

// account is one account's state. Every field but id is guarded by mu; an
// operation holds mu from the moment it reads what it checks until its record
// is appended to the journal, which is what keeps the log order of an
// account's records equal to the order of its changes.
//
// Ledger slices are append-only: an entry is never modified once appended,
// so a reader may keep a prefix it copied under mu and read it afterwards.
type account struct {
	id uuid.UUID

	mu        sync.Mutex
	lsn       uint64
	info      AccountInfo
	balances  [money.NumCurrencies]money.Amount
	ledger    [money.NumCurrencies][]LedgerEntry
	positions map[posKey]Position // nil until the first position
	// trades grows to RecentTradesKept, then is a ring whose oldest entry
	// is at tradeHead: most accounts never trade, so none pays for 20 slots.
	trades    []TradeSummary
	tradeHead int
}

func newAccount(id uuid.UUID) *account {
	return &account{id: id}
}

// applyLocked applies a change whose Prev the caller has checked.
// Lock should be held.
func (a *account) applyLocked(seq uint64, ch *AccountChange) {
	if ch.Info != nil {
		a.info = *ch.Info
	}
	for _, b := range ch.Balances {
		a.balances[b.Currency] = b.After
	}
	for _, l := range ch.Ledger {
		a.ledger[l.Currency] = append(a.ledger[l.Currency], l)
	}
	for _, p := range ch.Positions {
		k := posKey{p.Market, p.Currency}
		if p.Closed {
			delete(a.positions, k)
		} else {
			if a.positions == nil {
				a.positions = make(map[posKey]Position)
			}
			a.positions[k] = p
		}
	}
	for _, t := range ch.Trades {
		a.pushTrade(t)
	}
	a.lsn = seq
}

// pushTrade adds t to the recent trades, dropping the oldest when full.
// Lock should be held.
func (a *account) pushTrade(t TradeSummary) {
	if len(a.trades) < RecentTradesKept {
		a.trades = append(a.trades, t)
		return
	}
	a.trades[a.tradeHead] = t
	a.tradeHead = (a.tradeHead + 1) % RecentTradesKept
}

// recentTrades returns the kept trades, oldest first. Lock should be held.
func (a *account) recentTrades() []TradeSummary {
	if len(a.trades) == 0 {
		return nil
	}
	out := make([]TradeSummary, 0, len(a.trades))
	out = append(out, a.trades[a.tradeHead:]...)
	return append(out, a.trades[:a.tradeHead]...)
}

// imageLocked returns the whole account as an image change (Prev holds its
// LSN) without its ledger, and the ledger prefixes to add to it once the lock
// is released: copying a long ledger under the lock would stall trading.
// Lock should be held.
func (a *account) imageLocked() (AccountChange, [money.NumCurrencies][]LedgerEntry) {
	info := a.info
	ch := AccountChange{ID: a.id, Prev: a.lsn, Info: &info}
	var ledger [money.NumCurrencies][]LedgerEntry
	for c := range money.NumCurrencies {
		ch.Balances = append(ch.Balances, Balance{Currency: money.Currency(c), After: a.balances[c]})
		l := a.ledger[c]
		ledger[c] = l[:len(l):len(l)]
	}
	if len(a.positions) > 0 {
		ch.Positions = make([]Position, 0, len(a.positions))
		for _, p := range a.positions {
			ch.Positions = append(ch.Positions, p)
		}
	}
	ch.Trades = a.recentTrades()
	return ch, ledger
}
