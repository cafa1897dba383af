package core

import (
	"context"

	"github.com/google/uuid"
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
	all := a.refs().fills.snapshot()
	lsn := a.lsn
	a.mu.Unlock()
	fills = []TradeSummary{}
	for i := all.Len() - 1; i >= 0; i-- {
		f := all.at(i)
		if market != uuid.Nil && f.market != market {
			continue
		}
		if total >= offset && len(fills) < limit {
			fills = append(fills, f.value())
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
	all := a.refs().fills.snapshot()
	lsn := a.lsn
	a.mu.Unlock()
	for i := all.Len() - 1; i >= 0; i-- {
		if f := all.at(i); f.id == trade {
			if err := e.j.WaitDurable(ctx, lsn); err != nil {
				return TradeSummary{}, false, err
			}
			return f.value(), true, nil
		}
	}
	return TradeSummary{}, false, nil
}
