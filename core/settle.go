package core

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"marketd/core/money"
)

// MaxSettleHolders bounds the accounts one settlement pays: its record, one
// change per holder of about 200 bytes, must stay well inside the log's
// 64 MiB record limit, and every holder is locked while it is built.
const MaxSettleHolders = 200_000

// SettleRequest resolves a market with its outcome.
type SettleRequest struct {
	Market  uuid.UUID
	Outcome Side
}

// SettleResult is the outcome of a settlement.
type SettleResult struct {
	Market        uuid.UUID
	Outcome       Side
	PositionsPaid int                               // positions that received a payout
	TotalPaid     [money.NumCurrencies]money.Amount // payouts, per currency
	VigPaid       [money.NumCurrencies]money.Amount // vig paid to creator and referrers
}

// Settle resolves an active or closed market: every winning share pays one
// unit of its currency, the vig is paid from the market's profit
// (docs/API.md, "POST /api/admin/settle", docs/ARCHITECTURE.md, "Money and
// the house"), what is left returns to the house, and
// every position in the market is closed; all in one record.
func (e *Engine) Settle(ctx context.Context, req SettleRequest) (SettleResult, error) {
	if req.Outcome != Yes && req.Outcome != No {
		return SettleResult{}, fieldErr("outcome", "must be yes or no")
	}
	m := e.st.market(req.Market)
	if m == nil {
		return SettleResult{}, ErrMarketNotFound
	}
	c := e.getCommand(opSettle)
	c.settle = req
	err := e.submit(ctx, m, c)
	res := c.settleRes
	e.putCommand(c)
	if errors.Is(err, ErrMarketResolved) {
		return SettleResult{}, e.refuse(ctx, m.view.Load().LSN, err)
	}
	if err != nil {
		return SettleResult{}, err
	}
	return res, nil
}

// settlement builds a settlement record: one change per account, however
// many roles the account plays.
type settlement struct {
	pending
	byID map[uuid.UUID]int // account -> index in rec.Accounts
	now  int64
	ref  uuid.UUID
	s    sums
}

func (st *settlement) change(a *account) *AccountChange {
	if i, ok := st.byID[a.id]; ok {
		return &st.rec.Accounts[i]
	}
	st.byID[a.id] = len(st.rec.Accounts)
	return st.addAccount(a)
}

// pay credits amount (> 0) to a, after whatever the record already moved.
func (st *settlement) pay(a *account, cur money.Currency, t TxType, amount money.Amount) {
	st.payRef(a, cur, t, amount, st.ref)
}

// payRef moves amount (negative: a debit) to a with the ledger reference
// ref, after whatever the record already moved.
func (st *settlement) payRef(a *account, cur money.Currency, t TxType, amount money.Amount, ref uuid.UUID) {
	ch := st.change(a)
	bal := a.balances[cur]
	for _, b := range ch.Balances {
		if b.Currency == cur {
			bal = b.After
		}
	}
	st.credit(ch, cur, t, amount, st.s.add(bal, amount), ref, st.now)
}

// settle is the actor's side of Settle. An open oracle proposal is
// cancelled and its bonds returned, in the settlement's record. Runs on the
// market's goroutine.
func (e *Engine) settle(m *market, c *command) {
	if m.info.Status == StatusResolved {
		c.done <- ErrMarketResolved
		return
	}
	e.settleMarket(m, c, KindSettle, c.settle.Outcome, m.cancelProposal())
}

// settleMarket resolves m with outcome in one record of the kind given,
// answering on c.done; pc, when not nil, ends the market's open oracle
// proposal in the same record. The admin's settlement and the oracle's
// share it. Runs on the market's goroutine.
func (e *Engine) settleMarket(m *market, c *command, kind Kind, outcome Side, pc *proposalClose) {
	holders, err := e.holderAccounts(m)
	if err != nil {
		c.done <- err
		return
	}
	slices.SortFunc(holders, func(a, b *account) int { return compareIDs(a.id, b.id) })
	// Only this goroutine changes positions in this market, so the
	// referrers read here stay valid once every account is locked below.
	lockSet := append(slices.Clone(holders), e.st.account(HouseID), e.st.account(m.info.Creator))
	lockSet = append(lockSet, pc.accounts(e.st)...)
	for _, h := range holders {
		h.mu.Lock()
		for cur := range money.NumCurrencies {
			if p, ok := h.positions[posKey{m.id, money.Currency(cur)}]; ok && p.Referrer != uuid.Nil {
				lockSet = append(lockSet, e.st.account(p.Referrer))
			}
		}
		h.mu.Unlock()
	}
	unlock := lockAccounts(lockSet...)
	defer unlock()

	now := e.now()
	st := &settlement{byID: make(map[uuid.UUID]int), now: now, ref: m.id}
	st.rec = Record{Kind: kind, Time: now}
	mc := st.addMarket(m)
	info := m.info
	info.Status, info.Outcome, info.ResolvedAt = StatusResolved, outcome, now
	mc.Info = &info
	res := SettleResult{Market: m.id, Outcome: outcome}
	for cur := range money.NumCurrencies {
		if m.open[cur] {
			book := e.settleBook(st, m, holders, money.Currency(cur), outcome, &res)
			mc.Books = append(mc.Books, book)
		}
	}
	pc.apply(e, st, mc, holders)
	if st.s.err != nil {
		c.done <- fmt.Errorf("core: settle: %w", st.s.err)
		return
	}
	c.settleRes = res
	e.commit(&st.pending, c.done, nil)
}

// settleBook pays one currency's winners and vig and returns the book's
// after-image, emptied of collateral.
func (e *Engine) settleBook(st *settlement, m *market, holders []*account, cur money.Currency, outcome Side, res *SettleResult) Book {
	book := m.books[cur]
	key := posKey{m.id, cur}
	var paid money.Amount
	var refs []refShare
	for _, h := range holders {
		p, ok := h.positions[key]
		if !ok {
			continue
		}
		payout := p.Shares[outcome]
		if payout > 0 {
			st.pay(h, cur, TxSettlementPayout, payout)
			paid = st.s.add(paid, payout)
			res.PositionsPaid++
		}
		st.notify(h, st.change(h), Note{Kind: NoteMarketSettled, Time: st.now, Market: m.id,
			Currency: cur, Amount: payout, Outcome: outcome})
		if p.Referrer != uuid.Nil && p.RefVig > 0 {
			loss := st.s.sub(p.PaidIn, st.s.add(p.PaidOut, payout))
			refs = append(refs, refShare{p.Referrer, p.RefVig, max(0, loss) * 2 / 10})
		}
		closed := p
		closed.Closed = true
		ch := st.change(h)
		ch.Positions = append(ch.Positions, closed)
	}
	res.TotalPaid[cur] = paid
	remainder := st.s.sub(book.Collateral, paid)
	if remainder < 0 {
		panic(fmt.Sprintf("BUG: market %s %s collateral %d below payouts %d", m.id, cur, book.Collateral, paid))
	}
	profit := st.s.sub(remainder, book.Subsidy)
	vigPaid := e.payVig(st, m, cur, &book, profit, refs)
	res.VigPaid[cur] = vigPaid
	if back := st.s.sub(remainder, vigPaid); back != 0 {
		st.pay(e.st.account(HouseID), cur, TxMarketReturn, back)
	}
	book.Collateral = 0
	return book
}

// closeMarket logs an active market's passage to closed once its closing
// time has come; otherwise it does nothing. Runs on the market's goroutine.
func (e *Engine) closeMarket(m *market, sc *scratch, c *command) {
	now := e.now()
	if m.info.Status != StatusActive || now < m.info.ClosesAt {
		c.done <- nil
		return
	}
	info := m.info
	info.Status = StatusClosed
	if len(m.holders) == 0 {
		sc.reset(KindMarketClosed, now)
		sc.market(m)
		sc.setInfo(info)
		e.commit(&sc.pending, c.done, nil)
		return
	}
	// Holders hear of the close (notification market_closed), in the
	// same record. A close cannot be refused, so it is not bounded like a
	// settlement.
	holders := e.holdersOf(m)
	unlock := lockAccounts(holders...)
	defer unlock()
	st := &settlement{byID: make(map[uuid.UUID]int), now: now}
	st.rec = Record{Kind: KindMarketClosed, Time: now}
	st.addMarket(m).Info = &info
	st.notifyAll(holders, Note{Kind: NoteMarketClosed, Time: now, Market: m.id})
	e.commit(&st.pending, c.done, nil)
}

// CloseDue closes every active market past its closing time and returns how
// many it closed. Trading stops at the closing time whether or not this has
// run; this makes the status durable.
func (e *Engine) CloseDue(ctx context.Context) (int, error) {
	now := e.now()
	var due []*market
	e.st.rangeMarkets(func(m *market) bool {
		if v := m.view.Load(); v.Info.Status == StatusActive && now >= v.Info.ClosesAt {
			due = append(due, m)
		}
		return true
	})
	for _, m := range due {
		c := e.getCommand(opClose)
		err := e.submit(ctx, m, c)
		e.putCommand(c)
		if err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

// refShare is the vig one holder's trades accrued to its referrer, and its
// cap: 20% of the holder's net loss in the market.
type refShare struct {
	referrer uuid.UUID
	accrued  money.Amount
	capped   money.Amount
}

// payVig pays one currency's vig from the market's profit
// (docs/ARCHITECTURE.md, "Money and the house") and records, for the creator
// and each referrer, what accrued and what was paid; it returns the total paid.
func (e *Engine) payVig(st *settlement, m *market, cur money.Currency, book *Book, profit money.Amount, refs []refShare) money.Amount {
	var vigPaid money.Amount
	// What each account accrued and is paid, per role: every accrual gets
	// a VigPayment, paid or not, so GET /api/vig shows how it ended.
	creator := VigPayment{Market: m.id, Currency: cur, Role: VigCreator, Accrued: book.VigCreator, Time: st.now}
	perReferrer := make(map[uuid.UUID]*VigPayment)
	var order []uuid.UUID
	for _, r := range refs {
		vp := perReferrer[r.referrer]
		if vp == nil {
			vp = &VigPayment{Market: m.id, Currency: cur, Role: VigReferrer, Time: st.now}
			perReferrer[r.referrer] = vp
			order = append(order, r.referrer)
		}
		vp.Accrued = st.s.add(vp.Accrued, r.accrued)
	}
	if profit > 0 && book.VigTotal > 0 {
		pool := min(profit, book.VigTotal)
		if v := st.s.share(book.VigCreator, pool, book.VigTotal); v > 0 {
			st.pay(e.st.account(m.info.Creator), cur, TxVigEarning, v)
			creator.Paid = v
			vigPaid = st.s.add(vigPaid, v)
		}
		// One entry per beneficiary: sum each referrer's shares first.
		for _, r := range refs {
			if v := min(st.s.share(r.accrued, pool, book.VigTotal), r.capped); v > 0 {
				vp := perReferrer[r.referrer]
				vp.Paid = st.s.add(vp.Paid, v)
			}
		}
		for _, id := range order {
			if v := perReferrer[id].Paid; v > 0 {
				st.pay(e.st.account(id), cur, TxVigEarning, v)
				vigPaid = st.s.add(vigPaid, v)
			}
		}
	}
	if creator.Accrued > 0 && m.info.Creator != HouseID {
		ch := st.change(e.st.account(m.info.Creator))
		ch.Vig = append(ch.Vig, creator)
	}
	for _, id := range order {
		ch := st.change(e.st.account(id))
		ch.Vig = append(ch.Vig, *perReferrer[id])
	}
	return vigPaid
}
