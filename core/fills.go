package core

import (
	"context"
	"slices"

	"github.com/google/uuid"

	"marketd/core/money"
)

// Fills returns up to limit of an account's trades, newest first, from
// offset, those of one market only when market is not uuid.Nil, and how
// many matched in all; ErrAccountNotFound for an unknown account. Reasoning
// is kept only by the 20 most recent trades (the profile's), so fills carry
// none. It answers once the account's changes it read are durable: a bot
// whose trade timed out looks for it here (docs/API.md, "Finding an
// order"), and must never be shown a trade that a crash could take back.
func (e *Engine) Fills(ctx context.Context, id, market uuid.UUID, offset, limit int) (fills []TradeSummary, total int, err error) {
	a := e.st.account(id)
	if a == nil {
		return nil, 0, ErrAccountNotFound
	}
	a.mu.Lock()
	// Append-only: the prefix copied under the lock stays as it is.
	all := a.fills.snapshot()
	lsn := a.lsn
	a.mu.Unlock()
	fills = []TradeSummary{}
	for i := all.Len() - 1; i >= 0; i-- {
		f := all.at(i)
		if market != uuid.Nil && f.Market != market {
			continue
		}
		if total >= offset && len(fills) < limit {
			fills = append(fills, f.summary())
		}
		total++
	}
	if err := e.j.WaitDurable(ctx, lsn); err != nil {
		return nil, 0, err
	}
	return fills, total, nil
}

// Fill returns an account's trade by its ID: the account's own trades
// only, so that one account cannot read another's. Like Fills, it answers
// once the account's changes it read are durable.
func (e *Engine) Fill(ctx context.Context, id, trade uuid.UUID) (TradeSummary, bool, error) {
	a := e.st.account(id)
	if a == nil {
		return TradeSummary{}, false, nil
	}
	a.mu.Lock()
	all := a.fills.snapshot()
	lsn := a.lsn
	a.mu.Unlock()
	for i := all.Len() - 1; i >= 0; i-- {
		if f := all.at(i); f.ID == trade {
			if err := e.j.WaitDurable(ctx, lsn); err != nil {
				return TradeSummary{}, false, err
			}
			return f.summary(), true, nil
		}
	}
	return TradeSummary{}, false, nil
}

// fill is a TradeSummary without its reasoning, which only the recent
// trades keep: every trade of an account stays in its fills, and a type
// without pointers is allocated without a type header, never scanned by
// the collector and written without write barriers. TradeSummary's
// reasoning string made the collector walk every fill ever made at every
// cycle (docs/PERFORMANCE.md, "What keeps core from the floor now").
type fill struct {
	ID       uuid.UUID
	Market   uuid.UUID
	Currency money.Currency
	Side     Side
	Sell     bool
	Shares   money.Amount
	Cost     money.Amount
	Vig      money.Amount
	Time     int64
}

// fillOf returns t's fill.
func fillOf(t *TradeSummary) fill {
	return fill{ID: t.ID, Market: t.Market, Currency: t.Currency, Side: t.Side, Sell: t.Sell,
		Shares: t.Shares, Cost: t.Cost, Vig: t.Vig, Time: t.Time}
}

// summary returns the fill as a TradeSummary with no reasoning.
func (f *fill) summary() TradeSummary {
	return TradeSummary{ID: f.ID, Market: f.Market, Currency: f.Currency, Side: f.Side, Sell: f.Sell,
		Shares: f.Shares, Cost: f.Cost, Vig: f.Vig, Time: f.Time}
}

// appendFills appends the summaries of fills [start, end) of l to dst.
func appendFills(dst []TradeSummary, l *chunkList[fill], start, end int) []TradeSummary {
	dst = slices.Grow(dst, end-start)
	for i := start; i < end; i++ {
		dst = append(dst, l.at(i).summary())
	}
	return dst
}
