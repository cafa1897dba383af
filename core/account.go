package core

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"marketd/core/money"
)

// RecentTradesKept is how many of an account's trades it keeps for its
// profile: the last 20 (docs/API.md, "GET /api/agents/me").
const RecentTradesKept = 20

// account is one account's state, less its pointers, which its companion
// holds (accountRefs, account_refs.go). Every field but id, mode, placed
// and ref (set once, when the arena allocates it) is guarded by mu, and so
// are the companion's; an operation holds mu from the moment it reads what
// it checks until its record is appended to the journal, which is what
// keeps the log order of an account's records equal to the order of its
// changes.
//
// Ledgers and fills are append-only: an entry is never modified once
// appended, so a reader may keep a snapshot it took under mu and read it
// afterwards (chunkList).
//
// A trade reads and writes three whole cache lines of an account: the
// account's first (mu to ref) and its companion's first two (positions
// and fills; the ledgers, 32 bytes each); the rest (id, referrer, info)
// follow in the account, and what most accounts never have (notes,
// transfers, idempotency) sits behind one pointer in the companion
// (accountMore). With 1,024 traders the state a trade touches is cold
// when the account trades again, so every line is a miss; spread over the
// 528 bytes as they were, a trade touched seven or eight
// (docs/PERFORMANCE.md, "A trade's working set over 1,024 accounts"), and
// four with the ledger's and the fills' 64-byte headers on lines of their
// own ("The account's cold lines"). A trade names its account by the ID in
// its request, not id. The arena places accounts side by side, and
// companions side by side, both a whole number of lines, so that each
// one's lines start where its first does
// (TestAccountHotFieldsInFirstLines).
type account struct {
	mu       sync.Mutex
	lsn      uint64
	balances [money.NumCurrencies]money.Amount
	// volumeKP and bonusesKP are derived from the KP ledger, kept as entries
	// are appended (appendLedger) so that the leaderboard never walks a
	// ledger: volumeKP sums |amount| of trade_buy and trade_sell entries,
	// bonusesKP sums signup_bonus and referral_bonus entries. Both saturate
	// at the largest Amount instead of overflowing.
	volumeKP  money.Amount
	bonusesKP money.Amount
	// mode is info.Mode, stored with it, for the trade path, which reads
	// it without mu (tradingMode).
	mode atomic.Uint32
	// referred is whether referrer is set: the trade path reads referrer
	// only then.
	referred bool
	// reasoned is whether the account keeps reasoning (accountMore's
	// reasons), which a trade without reasoning reads only then.
	reasoned bool
	// placed is whether the account came from a state's arena, whose
	// array holds its companion (refs).
	placed bool
	// ref names the account in the state's arena (arena.go), by which the
	// account map holds it and the account finds its companion.
	ref arenaRef
	_   [4]byte // id starts the second line

	id uuid.UUID
	// referrer is info.Referrer, stored with it (applyLocked), for the
	// trade path, which gives it to a position that has none.
	referrer uuid.UUID

	info accountInfo
	// lastNote is the highest notification ID ever made, from which the
	// next is drawn.
	lastNote uint64
	// Pads the account to a whole number of cache lines.
	_ [8]byte
}

// stored reports whether a is one of the state's accounts: every account
// but the house, which the state starts with, was stored by the change
// that created it, which set its LSN under its lock. Caller holds a.mu.
func (a *account) stored() bool { return a.lsn != 0 || a.id == HouseID }

// tradingMode returns the currency of the account's trades, splits and
// merges (AccountInfo.Mode) without taking mu.
func (a *account) tradingMode() money.Currency { return money.Currency(a.mode.Load()) }

// applyLocked applies a change whose Prev the caller has checked.
// Caller holds a.mu.
func (a *account) applyLocked(seq uint64, ch *AccountChange, lim IdempotencyLimits) {
	if ch.Info != nil {
		// A copy: the record's memory may be reused after replay
		// applies it.
		a.setInfo(ch.Info)
		a.mode.Store(uint32(a.info.Mode))
		a.referrer, a.referred = a.info.Referrer, a.info.Referrer != uuid.Nil
	}
	for _, b := range ch.Balances {
		a.balances[b.Currency] = b.After
	}
	// By index, not by value: a copy of each entry and trade (about a
	// hundred bytes) saved (docs/PERFORMANCE.md, "The actor's trade
	// path").
	for i := range ch.Ledger {
		a.appendLedger(&ch.Ledger[i])
	}
	for i := range ch.Positions {
		a.putPosition(&ch.Positions[i])
	}
	for i := range ch.Trades {
		t := &ch.Trades[i]
		a.keepReasoning(t.Reasoning)
		a.refs().fills.push(makeFill(t))
	}
	// A trade has none of these: skipping them leaves their fields'
	// cache lines unwritten.
	if len(ch.Notes) > 0 || len(ch.NotesRead) > 0 {
		a.applyNotes(ch.Notes, ch.NotesRead)
	}
	if len(ch.Vig) > 0 {
		m := a.editMore()
		m.vig = append(m.vig, ch.Vig...)
	}
	if len(ch.Transfers) > 0 {
		m := a.editMore()
		m.transfers = append(m.transfers, ch.Transfers...)
	}
	for _, ie := range ch.Idem {
		a.putIdem(ie, lim)
	}
	a.updateTransfers(ch.TransferUpdates)
	a.lsn = seq
}

// updateTransfers replaces transfers by ID with their after-images. The
// list is shared with readers that took a prefix unlocked (Transfers,
// images), so it is copied rather than changed in place; updates are rare
// (an admin's decision on a pending deposit or a queued withdrawal). An
// update of a transfer the account does not have is a gap in the log.
// Caller holds a.mu.
func (a *account) updateTransfers(ts []Transfer) {
	if len(ts) == 0 {
		return
	}
	out := slices.Clone(a.transfers())
	for _, t := range ts {
		i := slices.IndexFunc(out, func(o Transfer) bool { return o.ID == t.ID })
		if i < 0 {
			panic(fmt.Sprintf("BUG: account %s: update of unknown transfer %s", a.id, t.ID))
		}
		out[i] = t
	}
	a.editMore().transfers = out
}

// hasTransfers reports whether the account has a transfer of each ID in
// ts. Replay checks it before it applies updates. Caller holds a.mu, or
// owns the state alone (recovery).
func (a *account) hasTransfers(ts []Transfer) bool {
	for _, t := range ts {
		if !slices.ContainsFunc(a.transfers(), func(o Transfer) bool { return o.ID == t.ID }) {
			return false
		}
	}
	return true
}

// appendLedger appends a ledger entry and adds it to the aggregates derived
// from the ledger. It is the only place entries are appended (live changes,
// replay and snapshot images alike), which keeps the aggregates equal to a
// recomputation from the ledger. Caller holds a.mu.
func (a *account) appendLedger(l *LedgerEntry) {
	if led := &a.refs().ledger[l.Currency]; led.empty() {
		led.pushFirst(firstLedgerEntry(*l))
	} else {
		led.push(ledgerSlot{LedgerEntry: *l})
	}
	if l.Currency == money.KP {
		a.volumeKP, a.bonusesKP = addToAggregates(a.volumeKP, a.bonusesKP, l.Type, l.Amount)
	}
}

// addToAggregates adds a KP entry of type t and amount to the
// leaderboard's aggregates: trades count their |amount| in the volume,
// signup and referral bonuses in the bonuses. Both saturate instead of
// overflowing.
func addToAggregates(volume, bonuses money.Amount, t TxType, amount money.Amount) (money.Amount, money.Amount) {
	switch t {
	case TxTradeBuy, TxTradeSell:
		volume = addSigned(volume, absAmount(amount))
	case TxSignupBonus, TxReferralBonus:
		bonuses = addSigned(bonuses, amount)
	}
	return volume, bonuses
}

// absAmount returns |x|, saturating: -MinInt64 does not fit.
func absAmount(x money.Amount) money.Amount {
	switch {
	case x == math.MinInt64:
		return math.MaxInt64
	case x < 0:
		return -x
	}
	return x
}

// ledgerEntries returns the number of entries in the ledgers of every
// currency.
func ledgerEntries(ledger *[money.NumCurrencies]listView[ledgerSlot]) int {
	n := 0
	for cur := range ledger {
		n += ledger[cur].Len()
	}
	return n
}

// ledgerEmpty reports whether the account's ledgers have no entry.
func (a *account) ledgerEmpty() bool {
	led := &a.refs().ledger
	for c := range led {
		if !led[c].empty() {
			return false
		}
	}
	return true
}

// keepReasoning keeps the reasoning of the next fill. The fills' length,
// which reads their rest once past listChunkLen, is read only when the
// ring is kept. Caller holds a.mu.
func (a *account) keepReasoning(reasoning string) {
	if !a.reasoned {
		if reasoning == "" {
			return
		}
		a.editMore().reasons = new([RecentTradesKept]string)
		a.reasoned = true
	}
	a.reasons()[a.refs().fills.Len()%RecentTradesKept] = reasoning
}

// recentCount returns how many trades the account's profile shows: its
// last RecentTradesKept. Caller holds a.mu.
func (a *account) recentCount() int { return min(a.refs().fills.Len(), RecentTradesKept) }

// appendRecent appends the account's recent trades, oldest first, with
// their reasoning, to out. Caller holds a.mu.
func (a *account) appendRecent(out []TradeSummary) []TradeSummary {
	fills := a.refs().fills.snapshot()
	n := fills.Len()
	first := n - a.recentCount()
	start := len(out)
	out = appendValues(out, &fills, first, n)
	if reasons := a.reasons(); reasons != nil {
		for i := first; i < n; i++ {
			out[start+i-first].Reasoning = reasons[i%RecentTradesKept]
		}
	}
	return out
}

// recentTrades returns the kept trades, oldest first. Caller holds a.mu.
func (a *account) recentTrades() []TradeSummary {
	if a.refs().fills.Len() == 0 {
		return nil
	}
	return a.appendRecent(make([]TradeSummary, 0, a.recentCount()))
}

// imageBuffers is the memory of one capture chunk's account images,
// reused from chunk to chunk: Capture's visitor keeps nothing, and a
// capture of a million accounts that allocated per account made the
// garbage collector stall trading. Appends that outgrow a buffer move it,
// which leaves the images already built pointing at the old, intact array.
type imageBuffers struct {
	infos  []AccountInfo
	bals   []Balance
	ledger []LedgerEntry
	pos    []Position
	trades []TradeSummary
	recent []TradeSummary
	notes  []Note
	idem   []IdemEntry
}

func (b *imageBuffers) reset() {
	b.infos, b.bals, b.ledger = b.infos[:0], b.bals[:0], b.ledger[:0]
	b.pos, b.trades, b.recent, b.notes = b.pos[:0], b.trades[:0], b.recent[:0], b.notes[:0]
	b.idem = b.idem[:0]
}

// imagePrefixes are the append-only lists of an account's image, taken
// under its lock and copied once it is released (addLedger, addTrades).
type imagePrefixes struct {
	ledger [money.NumCurrencies]listView[ledgerSlot]
	// fills holds the fills before the recent trades, its first
	// olderFills; recent the recent trades, copied under the lock since
	// their reasoning's ring changes in place.
	fills      listView[fill]
	olderFills int
	recent     []TradeSummary
}

// imageLocked returns the whole account as an image change (Prev holds its
// LSN), built in b, without its ledger and trades, and the snapshots of its
// ledger and fills to add to it once the lock is released (ledger:
// addLedger; trades: addTrades). Copying a long ledger or every fill of an
// account under its lock stalled the market actor trading for it: an
// account that has traded a million times has a million fills. Caller
// holds a.mu.
func (a *account) imageLocked(b *imageBuffers) (AccountChange, imagePrefixes) {
	b.infos = append(b.infos, a.infoOf())
	ch := AccountChange{ID: a.id, Prev: a.lsn, Info: &b.infos[len(b.infos)-1]}
	var pre imagePrefixes
	r := a.refs()
	start := len(b.bals)
	for c := range money.NumCurrencies {
		b.bals = append(b.bals, Balance{Currency: money.Currency(c), After: a.balances[c]})
		pre.ledger[c] = r.ledger[c].snapshot()
	}
	ch.Balances = b.bals[start:len(b.bals):len(b.bals)]
	if a.positionCount() > 0 {
		start := len(b.pos)
		b.pos = a.appendPositions(b.pos)
		ch.Positions = b.pos[start:len(b.pos):len(b.pos)]
	}
	if n := r.fills.Len(); n > 0 {
		pre.fills, pre.olderFills = r.fills.snapshot(), n-a.recentCount()
		start := len(b.recent)
		b.recent = a.appendRecent(b.recent)
		pre.recent = b.recent[start:len(b.recent):len(b.recent)]
	}
	if len(a.notes()) > 0 {
		// Notes change in place when read: copy them.
		start := len(b.notes)
		b.notes = append(b.notes, a.notes()...)
		ch.Notes = b.notes[start:len(b.notes):len(b.notes)]
	}
	// Append-only: a prefix stays as it is.
	ch.Vig = slices.Clip(a.vig())
	ch.Transfers = slices.Clip(a.transfers())
	if len(a.idem()) > 0 {
		// Entries are replaced in place by putIdem: copy them.
		start := len(b.idem)
		for _, k := range a.idem() {
			b.idem = append(b.idem, k.first)
			b.idem = append(b.idem, k.more...)
		}
		ch.Idem = b.idem[start:len(b.idem):len(b.idem)]
	}
	return ch, pre
}

// addTrades sets an image's trades: the fills before the recent trades,
// then the recent trades with their reasoning; loading them rebuilds both
// (applyLocked). The fills' snapshot is immutable: no lock is needed.
func (b *imageBuffers) addTrades(ch *AccountChange, pre *imagePrefixes) {
	if len(pre.recent) == 0 {
		return
	}
	start := len(b.trades)
	b.trades = appendValues(b.trades, &pre.fills, 0, pre.olderFills)
	b.trades = append(b.trades, pre.recent...)
	ch.Trades = b.trades[start:len(b.trades):len(b.trades)]
}

// addLedger joins an image's ledger prefixes into b. The prefixes are
// immutable: no lock is needed.
func (b *imageBuffers) addLedger(ch *AccountChange, ledger [money.NumCurrencies]listView[ledgerSlot]) {
	start := len(b.ledger)
	for c := range money.NumCurrencies {
		b.ledger = appendValues(b.ledger, &ledger[c], 0, ledger[c].Len())
	}
	if len(b.ledger) > start {
		ch.Ledger = b.ledger[start:len(b.ledger):len(b.ledger)]
	}
}
