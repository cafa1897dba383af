package core

import (
	"github.com/google/uuid"
)

// Fills returns up to limit of an account's trades, newest first, from
// offset, those of one market only when market is not uuid.Nil, and how
// many matched in all; ok is false for an unknown account. Reasoning is
// kept only by the 20 most recent trades (the profile's), so fills carry
// none.
func (e *Engine) Fills(id, market uuid.UUID, offset, limit int) (fills []TradeSummary, total int, ok bool) {
	a := e.st.account(id)
	if a == nil {
		return nil, 0, false
	}
	a.mu.Lock()
	// Append-only: the prefix copied under the lock stays as it is.
	all := a.fills[:len(a.fills):len(a.fills)]
	a.mu.Unlock()
	fills = []TradeSummary{}
	for i := len(all) - 1; i >= 0; i-- {
		f := &all[i]
		if market != uuid.Nil && f.Market != market {
			continue
		}
		if total >= offset && len(fills) < limit {
			fills = append(fills, *f)
		}
		total++
	}
	return fills, total, true
}

// Fill returns an account's trade by its ID: the account's own trades
// only, so that one account cannot read another's.
func (e *Engine) Fill(id, trade uuid.UUID) (TradeSummary, bool) {
	a := e.st.account(id)
	if a == nil {
		return TradeSummary{}, false
	}
	a.mu.Lock()
	all := a.fills[:len(a.fills):len(a.fills)]
	a.mu.Unlock()
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].ID == trade {
			return all[i], true
		}
	}
	return TradeSummary{}, false
}
