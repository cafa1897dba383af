package core

import (
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/core/pricing"
)

// cacheLineBytes is the cache line size of amd64 and most arm64 cores.
const cacheLineBytes = 64

// market is one market's state. It is owned by the market's goroutine (its
// actor) once the engine runs, and by the replaying goroutine before: no
// lock guards it. Other goroutines read the immutable MarketView that the
// owner publishes (view_publish.go).
type market struct {
	id  uuid.UUID
	lsn uint64
	// ref names the market in the state's arena (arena.go), by which the
	// market map holds it.
	ref  arenaRef
	info MarketInfo
	// infoView is the copy of info that published views share, nil once
	// info has changed since the last publish. Only apply changes info.
	infoView *MarketInfo
	books    [money.NumCurrencies]Book
	open     [money.NumCurrencies]bool // whether the currency's book exists

	// holders are the accounts with a position in this market, derived from
	// the accounts' positions at start and kept by the actor; settlement
	// pays them.
	holders map[uuid.UUID]struct{}

	// proposals are the market's oracle proposals, oldest first; votes the
	// votes on them, append-only so that views share prefixes; voted says
	// who voted on which proposal.
	proposals []Proposal
	votes     []Vote
	voted     map[voteKey]struct{}

	dirty bool // changed by replay, view not yet published; see State.dirty

	// The fields that callers read, and sendMu, which they write, per
	// command, have cache lines of their own: the counters after them are
	// written by the market's goroutine per trade, and every lock of
	// sendMu took that line from it (docs/PERFORMANCE.md, "The hop to the
	// market's goroutine").
	_     [cacheLineBytes]byte
	view  atomic.Pointer[MarketView]
	inbox chan *command // set by Engine.start, closed by Engine.Close, nil once retired

	// sendMu is held shared by a sender for its send into inbox, and by a
	// trade, a split or a merge for its whole course (Engine.enterMarket),
	// and exclusively by whoever drops or closes inbox (retire,
	// Engine.Close), so that no send can find the inbox gone or closed.
	// retired is set once the market is resolved and its goroutine ends
	// (retire.go).
	sendMu  sync.RWMutex
	retired atomic.Bool
	_       [cacheLineBytes]byte

	counters marketCounters // added to by the actor, read by Engine.Counters

	// pricing keeps each book's last curves for its trades' quotes.
	// Runs only on the market's goroutine.
	pricing [money.NumCurrencies]pricing.Memo

	// lag lets trades leave the view to be made on demand
	// (view_publish.go); eng, set by Engine.start, runs the goroutine.
	lag viewLag
	eng *Engine

	// A whole line after the last field: markets sit side by side in the
	// state's arena (arena.go), and each one's goroutine writes its first
	// and last lines per trade; with this, no two markets share a line,
	// wherever the arena's array starts (TestMarketsShareNoLine).
	_ [cacheLineBytes]byte
}

// MarketView is an immutable copy of a market's state, published by its
// actor after every change but a book change, and after those when a
// reader asks (view_publish.go), so that reads wait on the actor only for
// trades made since its last view.
type MarketView struct {
	ID  uuid.UUID
	LSN uint64 // the sequence number of the last record that changed it
	// Info is shared by the views published until it changes: never
	// modify it through a view. A pointer rather than a copy halves the
	// view, the one allocation of a trade, and keeps it under the 512
	// bytes above which the allocator writes a type header per object
	// (docs/PERFORMANCE.md, "The trade path's own CPU").
	Info  *MarketInfo
	Books [money.NumCurrencies]Book
	Open  [money.NumCurrencies]bool
	// Proposals are the oracle proposals, oldest first; Votes the votes on
	// them. Both are shared with the actor: never modify them.
	Proposals []Proposal
	Votes     []Vote
}

// Prices returns the marginal prices of yes and no in the currency's book;
// a book not opened yet is priced at q0, where its first operation opens it.
func (v *MarketView) Prices(c money.Currency) (yes, no float64) {
	if !c.Valid() || !v.Open[c] {
		return pricing.Prices(v.Info.Alpha, [NumSides]money.Amount{v.Info.Q0, v.Info.Q0})
	}
	return pricing.Prices(v.Info.Alpha, v.Books[c].Q)
}

// StatusAt returns the market's status as seen at nowNanos: an active market
// past its closing time is closed even before its close is logged.
func (v *MarketView) StatusAt(nowNanos int64) Status {
	if v.Info.Status == StatusActive && nowNanos >= v.Info.ClosesAt {
		return StatusClosed
	}
	return v.Info.Status
}

// apply applies a change whose Prev the caller has checked.
// Runs on the market's goroutine.
func (m *market) apply(seq uint64, ch *MarketChange) {
	m.applyChange(seq, ch)
	m.lag.applied.Store(seq)
}

// applyChange is apply but for lag.applied, which readers of a live market
// wait on: replay stores it once per market, when it publishes the view
// (publishDirty): an atomic store after every record waits for every
// store before it, 0.15-0.22 s of the replaying goroutine's 1.3-1.4 s in
// a profile of BenchmarkRecover's log recovered 10 times.
func (m *market) applyChange(seq uint64, ch *MarketChange) {
	if ch.Info != nil {
		m.info = *ch.Info
		m.infoView = nil // publish copies it
	}
	for i := range ch.Books {
		b := &ch.Books[i]
		m.books[b.Currency] = *b
		m.open[b.Currency] = true
	}
	// A trade's change has neither: the call was about 20 instructions
	// of every trade.
	if len(ch.Proposals) > 0 || len(ch.Votes) > 0 {
		m.applyOracle(ch)
	}
	m.lsn = seq
}

// publish makes the current state visible to readers.
// Runs on the market's goroutine.
func (m *market) publish() {
	if m.infoView == nil {
		info := m.info
		m.infoView = &info
	}
	m.view.Store(&MarketView{ID: m.id, LSN: m.lsn, Info: m.infoView, Books: m.books, Open: m.open,
		Proposals: m.proposals[:len(m.proposals):len(m.proposals)], Votes: m.votes[:len(m.votes):len(m.votes)]})
	m.lag.stale = false
	m.wakeViewWaiters()
}

// image returns the market as an image change built from its view: Prev
// holds its LSN. Safe from any goroutine.
func (v *MarketView) image() MarketChange {
	info := *v.Info
	ch := MarketChange{ID: v.ID, Prev: v.LSN, Info: &info}
	for c := range money.NumCurrencies {
		if v.Open[c] {
			ch.Books = append(ch.Books, v.Books[c])
		}
	}
	ch.Proposals, ch.Votes = v.Proposals, v.Votes
	return ch
}
