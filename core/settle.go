package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"marketd/core/money"
)

// SettleRequest resolves a market with its outcome.
type SettleRequest struct {
	Market  uuid.UUID
	Outcome Side
}

// SettleResult is the outcome of a settlement. Its payouts are counted
// when the settlement starts (settleAnswer), so that an idempotent
// settlement's first record can hold its answer.
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
// the house"), what is left returns to the house, and every position in the
// market is closed. A market with more holders than one record holds is
// settled in bounded steps, in status settling meanwhile (docs/ARCHITECTURE.md,
// "Bounded steps"); Settle returns once the last step is durable. With an
// Idempotency-Key (IdemCall in ctx), the answer is stored in the
// settlement's first record, the one that makes it durable and resumable
// (docs/API.md, "Idempotent requests").
func (e *Engine) Settle(ctx context.Context, req SettleRequest) (SettleResult, error) {
	if req.Outcome != Yes && req.Outcome != No {
		return SettleResult{}, fieldErr("outcome", "must be yes or no")
	}
	m := e.st.market(req.Market)
	if m == nil {
		return SettleResult{}, ErrMarketNotFound
	}
	if _, err := e.idemCaller(ctx); err != nil {
		return SettleResult{}, err
	}
	c := e.getCommand(opSettle)
	c.settle = req
	c.idem = idemCallOf(ctx)
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
// cancelled and its bonds returned, in the settlement's first record. Runs
// on the market's goroutine.
func (e *Engine) settle(m *market, c *command) {
	if m.info.Status == StatusResolved {
		c.done <- ErrMarketResolved
		return
	}
	e.settleMarket(m, c, KindSettle, c.settle.Outcome, m.cancelProposal())
}

// settleMarket resolves m with outcome in records of the kind given, in
// bounded steps (steps.go), answering on c.done once the last is durable;
// pc, when not nil, ends the market's open oracle proposal in the first
// record. The admin's settlement and the oracle's share it. Runs on the
// market's goroutine.
func (e *Engine) settleMarket(m *market, c *command, kind Kind, outcome Side, pc *proposalClose) {
	info := m.info
	info.Status, info.Outcome, info.ResolvedAt = StatusSettling, outcome, e.now()
	info.Step = Step{Kind: kind}
	if pc != nil && pc.notify {
		info.Step.Oracle = pc.p.ID
	}
	var s sums
	for cur := range money.NumCurrencies {
		if m.open[cur] {
			info.Step.Pool[cur] = vigPool(&s, &m.books[cur], info.Q0, outcome)
		}
	}
	if s.err != nil {
		c.done <- fmt.Errorf("core: settle: %w", s.err)
		return
	}
	if c.settleRes, s.err = e.settleAnswer(m, outcome); s.err != nil {
		c.done <- fmt.Errorf("core: settle: %w", s.err)
		return
	}
	e.runSettlement(m, info, pc, c)
}

// settleAnswer counts, before the settlement's first record, what its
// steps will pay: per currency, every winning share its holders hold (one
// unit each), and the positions with winning shares. Only this goroutine
// changes positions in m, so the counts hold until the steps pay them;
// each holder's lock guards its positions table against other markets'
// goroutines, whose stores and removals move the slots of this market's
// positions too (positions.go). Runs on the market's goroutine.
func (e *Engine) settleAnswer(m *market, outcome Side) (SettleResult, error) {
	res := SettleResult{Market: m.id, Outcome: outcome}
	var s sums
	for id := range m.holders {
		h := e.st.account(id)
		h.mu.Lock()
		for cur := range money.NumCurrencies {
			if !m.open[cur] {
				continue
			}
			if p, ok := h.position(m.id, money.Currency(cur)); ok && p.Shares[outcome] > 0 {
				res.TotalPaid[cur] = s.add(res.TotalPaid[cur], p.Shares[outcome])
				res.PositionsPaid++
			}
		}
		h.mu.Unlock()
	}
	return res, s.err
}

// vigPool returns what a book's vig may take at settlement
// (docs/ARCHITECTURE.md, "Money and the house"): the market's profit,
// collateral less the payouts and the subsidy, up to the vig accrued;
// never negative. The payouts are the
// winning shares held, q - q0 + splits, as the invariant checker holds.
func vigPool(s *sums, b *Book, q0 money.Amount, outcome Side) money.Amount {
	owed := s.add(s.sub(b.Q[outcome], q0), b.Splits)
	profit := s.sub(s.sub(b.Collateral, owed), b.Subsidy)
	return max(0, min(profit, b.VigTotal))
}

// settleBook pays one currency's winners in chunk and their referrers'
// vig, and, in the last step, the creator's vig and what is left to the
// house; it returns the book's after-image, its collateral reduced by
// what was paid (emptied by the last step).
func (e *Engine) settleBook(st *settlement, m *market, info *MarketInfo, chunk []*account, cur money.Currency, last bool, res *SettleResult) Book {
	book := m.books[cur]
	outcome := info.Outcome
	var paid money.Amount
	var refs []refShare
	for _, h := range chunk {
		p, ok := h.position(m.id, cur)
		if !ok {
			continue
		}
		payout := p.Shares[outcome]
		if payout > 0 {
			st.pay(h, cur, TxSettlementPayout, payout)
			paid = st.s.add(paid, payout)
		}
		st.notify(h, st.change(h), Note{Kind: NoteMarketSettled, Time: st.now, Market: m.id,
			Currency: cur, Amount: payout, Outcome: outcome})
		if p.Referrer != uuid.Nil && p.RefVig > 0 {
			loss := st.s.sub(p.PaidIn, st.s.add(p.PaidOut, payout))
			refs = append(refs, refShare{p.Referrer, p.RefVig, max(0, loss) * 2 / 10})
		}
		for side := range NumSides {
			info.Step.Closed[cur][side] = st.s.add(info.Step.Closed[cur][side], p.Shares[side])
		}
		closed := p
		closed.Closed = true
		ch := st.change(h)
		ch.Positions = append(ch.Positions, closed)
	}
	book.Collateral = st.s.sub(book.Collateral, paid)
	if book.Collateral < 0 {
		panic(fmt.Sprintf("BUG: market %s %s collateral %d below payouts %d", m.id, cur, m.books[cur].Collateral, paid))
	}
	vigPaid := e.payVig(st, m, cur, &book, info.Step.Pool[cur], refs, last)
	res.VigPaid[cur] = st.s.add(res.VigPaid[cur], vigPaid)
	book.Collateral = st.s.sub(book.Collateral, vigPaid)
	if last {
		// What is left is the subsidy and the profit the vig did not take.
		if back := book.Collateral; back != 0 {
			st.pay(e.st.account(HouseID), cur, TxMarketReturn, back)
		}
		book.Collateral = 0
	}
	return book
}

// closeMarket logs an active market's passage to closed once its closing
// time has come, in bounded steps (steps.go) that notify its holders;
// otherwise it does nothing. Runs on the market's goroutine.
func (e *Engine) closeMarket(m *market, sc *scratch, c *command) {
	now := e.now()
	if m.info.Status != StatusActive || now < m.info.ClosesAt {
		c.done <- nil
		return
	}
	c.acted = true
	info := m.info
	if len(m.holders) == 0 {
		info.Status = StatusClosed
		sc.reset(KindMarketClosed, now)
		sc.market(m)
		sc.setInfo(info)
		e.commit(&sc.pending, c.done, nil)
		return
	}
	info.Status = StatusClosing
	info.Step = Step{Kind: KindMarketClosed, Note: Note{Kind: NoteMarketClosed, Time: now, Market: m.id}}
	e.runNotify(m, info, c.done)
}

// CloseDue closes every active market past its closing time and returns how
// many this call closed (a market another call closed first is not
// counted); after an error, how many it closed before it. Trading stops at
// the closing time whether or not this has run; this makes the status
// durable.
func (e *Engine) CloseDue(ctx context.Context) (int, error) {
	now := e.now()
	var due []*market
	e.st.rangeMarkets(func(m *market) bool {
		if v := m.view.Load(); v.Info.Status == StatusActive && now >= v.Info.ClosesAt {
			due = append(due, m)
		}
		return true
	})
	closed := 0
	for _, m := range due {
		acted, err := e.submitActed(ctx, m, e.getCommand(opClose))
		if err != nil {
			return closed, err
		}
		if acted {
			closed++
		}
	}
	return closed, nil
}

// submitActed runs c on m, puts it back, and reports whether it acted: a
// due close or deadline that another call handled first did not.
func (e *Engine) submitActed(ctx context.Context, m *market, c *command) (bool, error) {
	err := e.submit(ctx, m, c)
	acted := c.acted
	e.putCommand(c)
	return acted, err
}

// refShare is the vig one holder's trades accrued to its referrer, and its
// cap: 20% of the holder's net loss in the market.
type refShare struct {
	referrer uuid.UUID
	accrued  money.Amount
	capped   money.Amount
}

// payVig pays one currency's vig from the pool fixed when the settlement
// started (docs/ARCHITECTURE.md, "Money and the house") and records, for
// each referrer of a holder in this step and, in the last step, for the
// creator, what accrued and what was paid; it returns the total paid. A
// referrer whose referees fall in several steps gets a VigPayment per step.
func (e *Engine) payVig(st *settlement, m *market, cur money.Currency, book *Book, pool money.Amount, refs []refShare, last bool) money.Amount {
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
	if pool > 0 && book.VigTotal > 0 {
		if last {
			if v := st.s.share(book.VigCreator, pool, book.VigTotal); v > 0 {
				st.pay(e.st.account(m.info.Creator), cur, TxVigEarning, v)
				creator.Paid = v
				vigPaid = st.s.add(vigPaid, v)
			}
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
	if last && creator.Accrued > 0 && m.info.Creator != HouseID {
		ch := st.change(e.st.account(m.info.Creator))
		ch.Vig = append(ch.Vig, creator)
	}
	for _, id := range order {
		ch := st.change(e.st.account(id))
		ch.Vig = append(ch.Vig, *perReferrer[id])
	}
	return vigPaid
}
