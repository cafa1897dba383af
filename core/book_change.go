package core

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"marketd/core/money"
	"marketd/core/pricing"
)

// A trade, a split and a merge are one kind of operation: a change of a
// market's book in one currency by one trader, priced on the curve
// (docs/API.md, "POST /api/markets/trade", "POST /api/markets/split-merge").
// They share every step but the pricing and the answer: the caller's side
// (submitBookChange), the actor's checks, locks, idempotency and commit
// (changeBook), and the record of the book, the position and the balance
// (buildBookChange). The pricing is quoteTrade and applyTrade (trade.go),
// quoteSplit and applySplit (split.go).

// submitBookChange is the caller's side of a trade, a split or a merge: c
// is its command, its request set, and invalid the request's validation
// error. It finds the market and the trader, sets *mode, when not nil, to
// the trader's trading mode, and runs c on the market's goroutine; a
// refusal it returns once the state it rests on is durable (refuseOn). The
// caller reads c's result, and puts c back.
func (e *Engine) submitBookChange(ctx context.Context, c *command, invalid error, marketID, accountID uuid.UUID, mode *money.Currency) error {
	if invalid != nil {
		return invalid
	}
	m, a, err := e.marketAndTrader(marketID, accountID)
	if err != nil {
		return err
	}
	if mode != nil {
		*mode = a.tradingMode()
	}
	if err := e.enterMarket(m); err != nil {
		return err
	}
	defer m.sendMu.RUnlock()
	if err := e.refuseInSteps(ctx, m); err != nil {
		return err
	}
	c.acct = a
	sent, err := e.dispatch(ctx, m, c)
	if sent {
		err = <-c.done
	}
	if err != nil {
		return e.refuseOn(ctx, m, a, err)
	}
	return nil
}

// changeBook is the actor's side of a trade, a split or a merge. Runs on
// the market's goroutine.
func (e *Engine) changeBook(m *market, sc *scratch, c *command) {
	now := e.now()
	if !m.tradable(now) {
		c.done <- ErrMarketNotActive
		return
	}
	// What the checks need of the request: a trade's or a split's.
	isTrade := c.op == opTrade
	var cur money.Currency
	var hasSeq bool
	var seq uint64
	var idem *Idempotent
	if isTrade {
		r := &c.trade
		cur, hasSeq, seq, idem = r.Currency, r.HasExpectSeq, r.ExpectSeq, &r.Idem
	} else {
		r := &c.split
		cur, hasSeq, seq, idem = r.Currency, r.HasExpectSeq, r.ExpectSeq, &r.Idem
	}
	if err := m.checkExpectSeq(cur, hasSeq, seq); err != nil {
		c.done <- err
		return
	}
	// c belongs to its caller again once commit has handed the record to
	// the journal: keep what is needed after that.
	a := c.acct
	// Unlocked on each way out rather than by a deferred call, about 20
	// instructions a trade: nothing between panics but a bug, which
	// crashes the process from the market's goroutine (Engine.serve), and
	// a retired market's command, handled on its caller's goroutine, is
	// refused above, before the lock (handleRetired).
	house := e.lockTrader(m, a, cur)
	if idem.Key != "" {
		if err := e.checkIdem(a, idem, now); err != nil {
			unlockTrader(a, house)
			c.done <- err
			return
		}
	}
	newHolder, err := e.buildBookChange(m, sc, c, cur, house, now)
	if err != nil {
		unlockTrader(a, house)
		c.done <- err
		return
	}
	if idem.Key != "" {
		var answer []byte
		if isTrade {
			answer = c.trade.Answer(&c.tradeRes)
		} else {
			answer = c.split.Answer(&c.splitRes)
		}
		sc.storeIdem(a, idemEntry(idem, now, answer))
	}
	// The trader's change alone, without a stored answer: the next reset
	// clears only its parts (scratch.reset).
	sc.bookOnly = house == nil && idem.Key == ""
	side, sell, cost, kind := c.trade.Side, c.trade.Sell, c.tradeRes.Cost, sc.rec.Kind
	// The view is made when a reader asks for it (view_publish.go).
	sc.pending.lazyView, sc.pending.sized = true, idem.Key == ""
	ok := e.commit(&sc.pending, c.done, nil)
	sc.pending.lazyView, sc.pending.sized = false, false
	if ok {
		// An account with a position in the market is among its
		// holders already: a map assignment saved per trade.
		if newHolder {
			m.holders[a.id] = struct{}{}
		}
		if isTrade {
			m.counters.countTrade(cur, side, sell, cost)
		} else {
			m.counters.countBookRecord(kind)
		}
	}
	unlockTrader(a, house)
}

// buildBookChange checks a trade, a split or a merge of m's book in cur
// and builds its record in sc, and reports whether it opens the trader's
// first position in the book. Caller holds the trader's mu, and house.mu
// when house is not nil.
func (e *Engine) buildBookChange(m *market, sc *scratch, c *command, cur money.Currency, house *account, now int64) (newHolder bool, err error) {
	a, kind := c.acct, c.bookKind()
	sc.reset(kind, now)
	sc.market(m)
	var s sums
	// The book's and the position's after-images are built where the
	// record holds them, the scratch's arrays, not in copies on the
	// stack that are copied there at the end: two copies of 96 bytes and
	// their stack lines a trade (docs/PERFORMANCE.md, "The trade's record
	// on the market's goroutine"). A refused change leaves them to the
	// next reset.
	book, pi := &sc.books[0], 0
	if house != nil {
		// The trader's change follows the house's (fundBook adds it first).
		*book, pi = e.fundBook(sc, m, house, cur, now, &s), 1
	} else {
		*book = m.books[cur]
	}
	pos := &sc.poss[pi]
	var held bool
	if *pos, held = a.position(m.id, cur); !held {
		*pos = Position{Market: m.id, Currency: cur}
	}
	if pos.Referrer == uuid.Nil && a.referred {
		pos.Referrer = a.referrer
	}
	balance := a.balances[cur]
	var q pricing.Quote
	// paid: the trader receives q.Amount (a sell or a merge) rather than
	// pays it.
	tx, paid := TxTradeBuy, false
	if kind == KindTrade {
		r := &c.trade
		if err = quoteTrade(&q, &m.pricing[cur], &m.info, r, book, pos, balance); err != nil {
			return false, err
		}
		balance = applyTrade(r, &q, book, pos, balance, &s)
		if r.Sell {
			tx, paid = TxTradeSell, true
		}
	} else if q, tx, paid, balance, err = splitChange(&m.info, &c.split, book, pos, balance, &s); err != nil {
		return false, err
	}
	if s.err != nil {
		return false, fmt.Errorf("core: %v: %w", kind, s.err)
	}
	if book.Collateral < 0 || book.Q != q.QAfter {
		panic(fmt.Sprintf("BUG: market %s: collateral %d, q %v after a %v quoted to %v", m.id, book.Collateral, book.Q, kind, q.QAfter))
	}
	ref := sc.ids.next()
	ledgerAmount := -q.Amount
	if paid {
		ledgerAmount = q.Amount
	}
	ac := sc.account(a, c.bookAccount())
	sc.credit(ac, cur, tx, ledgerAmount, balance, ref, now)
	ac.Positions = sc.poss[pi : pi+1]
	sc.rec.Markets[0].Books = sc.books[:1]
	if kind == KindTrade {
		r := &c.trade
		// Field by field rather than a composite literal, which the
		// compiler builds on the stack and copies: every field is set,
		// and c's result is zero until here (command.reset).
		t := &sc.trds[0]
		t.ID, t.Market, t.Currency, t.Side, t.Sell = ref, m.id, cur, r.Side, r.Sell
		t.Shares, t.Cost, t.Vig, t.Reasoning, t.Time = r.Shares, q.Amount, q.Vig, r.Reasoning, now
		ac.Trades = sc.trds[:1]
		res := &c.tradeRes
		res.TradeID, res.Market, res.Currency, res.Side, res.Sell = ref, m.id, cur, r.Side, r.Sell
		res.Shares, res.Cost, res.Vig, res.BalanceAfter = r.Shares, q.Amount, q.Vig, balance
		res.Time = time.Unix(0, now).UTC()
		res.PriceYesAfter, res.PriceNoAfter, res.MarketSeq = q.PricesAfter[0], q.PricesAfter[1], book.MarketSeq()
	} else {
		c.splitRes = splitResult(&c.split, m.id, cur, &q, balance, book, pos)
	}
	return !held, nil
}

// bookAccount is the ID of a book change's trader, from its request: the
// account's own id is off the lines a trade touches (account).
func (c *command) bookAccount() uuid.UUID {
	if c.op != opSplitMerge {
		return c.trade.Account
	}
	return c.split.Account
}

// bookKind is the record kind of a book change's command: a trade, a
// split or a merge.
func (c *command) bookKind() Kind {
	switch {
	case c.op != opSplitMerge:
		return KindTrade
	case c.split.Merge:
		return KindMerge
	}
	return KindSplit
}

// splitChange quotes a split or merge of r on book and applies it to
// book, pos and the trader's balance: its quote, its ledger type, whether
// the trader is paid (a merge) and the balance after.
func splitChange(info *MarketInfo, r *SplitRequest, book *Book, pos *Position, balance money.Amount, s *sums) (pricing.Quote, TxType, bool, money.Amount, error) {
	sq, err := quoteSplit(info, r, book, pos, balance)
	if err != nil {
		return pricing.Quote{}, 0, false, balance, err
	}
	balance = applySplit(r, sq, book, pos, balance, s)
	if r.Merge {
		return sq.Quote, TxMerge, true, balance, nil
	}
	return sq.Quote, TxSplit, false, balance, nil
}

// splitResult is what a split or merge answers: q, book and pos are its
// quote and after-images, balance the trader's balance after it.
func splitResult(r *SplitRequest, market uuid.UUID, cur money.Currency, q *pricing.Quote, balance money.Amount, book *Book, pos *Position) SplitResult {
	return SplitResult{Market: market, Currency: cur, Merge: r.Merge, Amount: r.Amount,
		Cost: q.Amount, Vig: q.Vig, BalanceAfter: balance, YesShares: pos.Shares[Yes], NoShares: pos.Shares[No],
		PriceYesAfter: q.PricesAfter[0], PriceNoAfter: q.PricesAfter[1], MarketSeq: book.MarketSeq()}
}
