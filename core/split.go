package core

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"marketd/core/money"
)

// SplitRequest turns money into pairs of yes and no shares (split) or pairs
// back into money (merge), one unit per pair.
type SplitRequest struct {
	Account  uuid.UUID
	Market   uuid.UUID
	Currency money.Currency
	Merge    bool
	Amount   money.Amount
}

// SplitResult is the outcome of a split or a merge.
type SplitResult struct {
	Market       uuid.UUID
	Currency     money.Currency
	Merge        bool
	Amount       money.Amount
	BalanceAfter money.Amount
	YesShares    money.Amount // held after
	NoShares     money.Amount
}

func (r *SplitRequest) validate() error {
	switch {
	case !r.Currency.Valid():
		return fieldErr("currency", "unknown currency")
	case r.Amount <= 0:
		return fieldErr("amount", "must be positive")
	case r.Amount > MaxAmount:
		return fieldErr("amount", "must be at most 1e9")
	}
	return nil
}

// SplitMerge splits or merges for an account, answering once durable.
func (e *Engine) SplitMerge(ctx context.Context, req SplitRequest) (SplitResult, error) {
	if err := req.validate(); err != nil {
		return SplitResult{}, err
	}
	m, a, err := e.marketAndTrader(req.Market, req.Account)
	if err != nil {
		return SplitResult{}, err
	}
	if err := e.refuseInSteps(ctx, m); err != nil {
		return SplitResult{}, err
	}
	c := e.getCommand(opSplitMerge)
	c.acct, c.split = a, req
	err = e.submit(ctx, m, c)
	res := c.splitRes
	e.putCommand(c)
	if err != nil {
		return SplitResult{}, err
	}
	return res, nil
}

// splitMerge runs on the market's goroutine.
func (e *Engine) splitMerge(m *market, sc *scratch, c *command) {
	now := e.now()
	if !m.tradable(now) {
		c.done <- ErrMarketNotActive
		return
	}
	// c belongs to its caller again once commit has handed the record to
	// the journal: keep what is needed after that.
	a := c.acct
	house := e.lockTrader(m, a, c.split.Currency)
	defer unlockTrader(a, house)
	if err := e.buildSplit(m, sc, c, house, now); err != nil {
		c.done <- err
		return
	}
	if e.commit(&sc.pending, c.done, nil) {
		m.holders[a.id] = struct{}{}
	}
}

// buildSplit checks a split or merge and builds its record in sc. Account
// locks should be held.
func (e *Engine) buildSplit(m *market, sc *scratch, c *command, house *account, now int64) error {
	r := &c.split
	a := c.acct
	kind := KindSplit
	if r.Merge {
		kind = KindMerge
	}
	sc.reset(kind, now)
	sc.market(m)
	var s sums
	book := m.books[r.Currency]
	if house != nil {
		book = e.fundBook(sc, m, house, r.Currency, now, &s)
	}
	pos, ok := a.positions[posKey{m.id, r.Currency}]
	if !ok {
		pos = Position{Market: m.id, Currency: r.Currency, Referrer: a.info.Referrer}
	}
	balance := a.balances[r.Currency]
	n := r.Amount
	tx, ledgerAmount := TxSplit, -n
	if r.Merge {
		if pos.Shares[Yes] < n || pos.Shares[No] < n {
			return ErrInsufficientShares
		}
		tx, ledgerAmount = TxMerge, n
		for side := range NumSides {
			out := pos.Cost[side]
			if n < pos.Shares[side] {
				out = s.share(pos.Cost[side], n, pos.Shares[side])
			}
			pos.Cost[side] = s.sub(pos.Cost[side], out)
			pos.Shares[side] = s.sub(pos.Shares[side], n)
		}
		pos.PaidOut = s.add(pos.PaidOut, n)
		balance = s.add(balance, n)
		book.Collateral = s.sub(book.Collateral, n)
		book.Splits = s.sub(book.Splits, n)
	} else {
		if balance < n {
			return ErrInsufficientBalance
		}
		half := n / 2
		pos.Cost[Yes] = s.add(pos.Cost[Yes], half)
		pos.Cost[No] = s.add(pos.Cost[No], n-half)
		pos.Shares[Yes] = s.add(pos.Shares[Yes], n)
		pos.Shares[No] = s.add(pos.Shares[No], n)
		pos.PaidIn = s.add(pos.PaidIn, n)
		balance = s.sub(balance, n)
		book.Collateral = s.add(book.Collateral, n)
		book.Splits = s.add(book.Splits, n)
	}
	if s.err != nil {
		return fmt.Errorf("core: split/merge: %w", s.err)
	}
	ref := e.ids.next()
	ac := sc.account(a)
	sc.credit(ac, r.Currency, tx, ledgerAmount, balance, ref, now)
	sc.addPosition(ac, pos)
	sc.setBook(book)
	c.splitRes = SplitResult{Market: m.id, Currency: r.Currency, Merge: r.Merge, Amount: n,
		BalanceAfter: balance, YesShares: pos.Shares[Yes], NoShares: pos.Shares[No]}
	return nil
}
