package core

import (
	"fmt"

	"github.com/google/uuid"

	"marketd/core/money"
)

// pending is a record being built, with the objects it changes: the caller
// holds all of them (account locks, the market goroutine, the supply and
// auth locks) from the checks until commit returns.
type pending struct {
	rec     Record
	accts   []*account // parallel to rec.Accounts
	mkts    []*market  // parallel to rec.Markets
	entries int        // ledger entries in rec so far: the next one's index
	// idem, when not nil, is the idempotent request the record answers
	// with outcome (pending.answer, attachIdem).
	idem    *IdemCall
	outcome any
	// lazyView, set by a book change on its market's goroutine, leaves
	// the market's view to be made on demand (view_publish.go), and the
	// count of its record to the market (countTrade, countBookRecord).
	lazyView bool
	// sized, set by a book change without an idempotency key, says that
	// the record cannot pass the log's limits, so commit skips
	// CheckRecordSize, 2.4% of a trade's instructions: every list of it
	// is one of scratch's arrays (at most 4 entries) and its only string,
	// the reasoning, is at most MaxReasoningRunes (validate);
	// TestBookChangeRecordFits holds its largest form under the limits.
	sized bool
}

// commit refuses a record the log could not write (CheckRecordSize), then
// reserves the record's sequence number, applies it to the objects,
// calls publish (which makes new objects findable), and hands the record to
// the journal, whose answer goes to done. It reports whether the record was
// applied; when the journal refuses, done has the error and nothing changed.
//
// The order matters twice. The number is reserved under the objects' locks,
// so the log order of any object's records is the order of its changes. And
// a record reaches the journal only after it is applied and published, so a
// snapshot that starts after the journal has a record sees the record's
// changes (docs/ARCHITECTURE.md).
func (e *Engine) commit(p *pending, done chan<- error, publish func()) bool {
	if p.idem != nil {
		if err := e.attachIdem(p); err != nil {
			done <- err
			return false
		}
	}
	if !p.sized {
		if err := CheckRecordSize(&p.rec); err != nil {
			done <- err
			return false
		}
	}
	seq, err := e.j.Next()
	if err != nil {
		done <- err
		return false
	}
	rec := &p.rec
	for i := range rec.Accounts {
		ch := &rec.Accounts[i]
		for j := range ch.Ledger {
			ch.Ledger[j].Seq = seq
		}
		a := p.accts[i]
		if a.lsn != ch.Prev {
			panic(fmt.Sprintf("BUG: account %s at LSN %d, record built at %d", a.id, a.lsn, ch.Prev))
		}
		// The info before the change matters to the lookups only when the
		// change has one; a trade's has not, and spares the copy.
		var old *AccountInfo
		if ch.Info != nil {
			info := a.infoOf()
			old = &info
		}
		a.applyLocked(seq, ch, e.st.idemLimits)
		e.st.indexAccount(ch.ID, old, ch)
	}
	for i := range rec.Markets {
		m := p.mkts[i]
		mc := &rec.Markets[i]
		if m.lsn != mc.Prev {
			panic(fmt.Sprintf("BUG: market %s at LSN %d, record built at %d", m.id, m.lsn, mc.Prev))
		}
		m.apply(seq, mc)
		if p.lazyView {
			m.lag.stale = true
		} else {
			m.publish()
		}
		e.st.indexMarket(m.id, mc.Prev == 0, mc)
	}
	if rec.Supply != nil {
		e.st.supply.apply(seq, rec.Supply)
	}
	for _, kc := range rec.Keys {
		if kc.Purged {
			e.st.auth.removeKey(kc.Key.ID)
		} else {
			e.st.auth.applyKey(seq, kc.Key)
		}
	}
	for _, sc := range rec.Sessions {
		if sc.Purged {
			delete(e.st.auth.sessions, sc.Session.Hash)
		} else {
			e.st.auth.putSession(seq, sc.Session)
		}
	}
	if publish != nil {
		publish()
	}
	// A book change's record is counted by its market (changeBook).
	if !p.lazyView {
		e.counters.records[rec.Kind].Add(1)
	}
	e.j.Append(seq, rec, done)
	return true
}

// addAccount adds an account change to the record and returns it.
func (p *pending) addAccount(a *account) *AccountChange {
	p.rec.Accounts = append(p.rec.Accounts, AccountChange{ID: a.id, Prev: a.lsn})
	p.accts = append(p.accts, a)
	return &p.rec.Accounts[len(p.rec.Accounts)-1]
}

// addMarket adds a market change to the record and returns it.
func (p *pending) addMarket(m *market) *MarketChange {
	p.rec.Markets = append(p.rec.Markets, MarketChange{ID: m.id, Prev: m.lsn})
	p.mkts = append(p.mkts, m)
	return &p.rec.Markets[len(p.rec.Markets)-1]
}

// credit adds a signed movement to an account change: the new balance and
// its ledger entry. Seq is filled in by commit.
func (p *pending) credit(ch *AccountChange, cur money.Currency, t TxType, amount, after money.Amount, ref uuid.UUID, now int64) {
	idx := p.entries
	p.entries++
	setBalance(ch, cur, after)
	ch.Ledger = append(ch.Ledger, LedgerEntry{Index: uint32(idx), Currency: cur, Type: t,
		Amount: amount, BalanceAfter: after, Ref: ref, Time: now})
}

// setBalance records a balance after-image, replacing an earlier one of the
// same currency in the same change.
func setBalance(ch *AccountChange, cur money.Currency, after money.Amount) {
	for i := range ch.Balances {
		if ch.Balances[i].Currency == cur {
			ch.Balances[i].After = after
			return
		}
	}
	ch.Balances = append(ch.Balances, Balance{Currency: cur, After: after})
}

// scratch is the record memory a market goroutine reuses for every
// single-account command: the journal does not retain a record after Append,
// and apply copies what it keeps, so a trade builds its record without
// allocating.
type scratch struct {
	pending
	// ids draws the IDs of the goroutine's trades: its own buffer, so
	// that no lock is shared with the other markets' goroutines.
	ids   idBuffer
	accts [2]AccountChange
	ptrs  [2]*account
	mkts  [1]MarketChange
	mptrs [1]*market
	bals  [4]Balance
	ledg  [4]LedgerEntry
	poss  [2]Position
	trds  [1]TradeSummary
	idem  [1]IdemEntry
	books [1]Book
	minfo MarketInfo
	// bookOnly says that the record last built is a book change of the
	// trader's account alone, without a stored answer (reset).
	bookOnly bool
}

// reset starts a new record in the scratch memory. It clears only the
// account changes the last record used (a trade uses one of the two):
// clearing both and then setting both wrote three times their 592 bytes,
// about 110 instructions of a trade. Each part is cleared where it is
// rather than assigned a composite literal, which the compiler builds on
// the stack and copies: a stack line written and read per part. After a
// book change of the trader's account alone without a stored answer
// (bookOnly, set by changeBook), only the four lists it set are emptied:
// its ID and Prev are set again by the next record's account, and the
// rest of the change and of the record it never set; the zeroing of the
// 296-byte change and of the record was about 45 instructions of a trade
// (docs/PERFORMANCE.md, "The trade's own instructions").
// TestScratchResetAfterBookChange holds the next record to the one a full
// reset gives.
func (sc *scratch) reset(kind Kind, now int64) {
	r := &sc.rec
	if sc.bookOnly {
		sc.bookOnly = false
		ch := &sc.accts[0]
		ch.Balances, ch.Ledger, ch.Positions, ch.Trades = ch.Balances[:0], ch.Ledger[:0], nil, nil
	} else {
		used := min(len(r.Accounts), len(sc.accts))
		if r.Accounts == nil {
			used = len(sc.accts)
		}
		for i := range used {
			ch := &sc.accts[i]
			*ch = AccountChange{}
			ch.Balances, ch.Ledger = sc.bals[2*i:2*i:2*i+2], sc.ledg[2*i:2*i:2*i+2]
		}
		*r = Record{}
	}
	r.Kind, r.Time, r.Accounts, r.Markets = kind, now, sc.accts[:0], sc.mkts[:0]
	sc.entries = 0
	sc.pending.accts = sc.ptrs[:0]
	sc.pending.mkts = sc.mptrs[:0]
}

// account adds a change of account a, whose ID is id, to the scratch
// record, keeping the scratch's preallocated slices. The caller names the
// ID: a.id is off the lines a trade touches (account).
func (sc *scratch) account(a *account, id uuid.UUID) *AccountChange {
	i := len(sc.rec.Accounts)
	sc.rec.Accounts = sc.rec.Accounts[:i+1]
	ch := &sc.rec.Accounts[i]
	ch.ID, ch.Prev = id, a.lsn
	sc.pending.accts = append(sc.pending.accts, a)
	return ch
}

// market adds the market's change to the scratch record.
func (sc *scratch) market(m *market) *MarketChange {
	sc.rec.Markets = sc.rec.Markets[:1]
	ch := &sc.rec.Markets[0]
	*ch = MarketChange{}
	ch.ID, ch.Prev = m.id, m.lsn
	sc.pending.mkts = append(sc.pending.mkts[:0], m)
	return ch
}

// setInfo sets the after-image of the market's info in the scratch record.
func (sc *scratch) setInfo(info MarketInfo) {
	sc.minfo = info
	sc.rec.Markets[0].Info = &sc.minfo
}

// storeIdem adds an idempotent request's stored answer to a's change in
// the scratch record: it is logged and applied with the operation.
func (sc *scratch) storeIdem(a *account, ie IdemEntry) {
	for i := range sc.rec.Accounts {
		if ch := &sc.rec.Accounts[i]; ch.ID == a.id {
			sc.idem[0] = ie
			ch.Idem = sc.idem[:1]
			return
		}
	}
	panic(fmt.Sprintf("BUG: idempotent answer for account %s, which the record does not change", a.id))
}
