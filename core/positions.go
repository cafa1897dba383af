package core

import (
	"github.com/google/uuid"

	"marketd/core/money"
)

// position returns the account's position in market m's book in cur.
// Caller holds a.mu, or owns the state alone (recovery).
func (a *account) position(m uuid.UUID, cur money.Currency) (Position, bool) {
	p, ok := a.positions[cur][m]
	return p, ok
}

// putPosition stores p's after-image, or removes the position when p is
// Closed. Caller holds a.mu, or owns the state alone (recovery).
func (a *account) putPosition(p *Position) {
	byMarket := a.positions[p.Currency]
	if p.Closed {
		delete(byMarket, p.Market)
		return
	}
	if byMarket == nil {
		byMarket = make(map[uuid.UUID]Position)
		a.positions[p.Currency] = byMarket
	}
	byMarket[p.Market] = *p
}

// positionCount returns how many positions the account holds, in every
// currency. Caller holds a.mu.
func (a *account) positionCount() int {
	n := 0
	for _, byMarket := range a.positions {
		n += len(byMarket)
	}
	return n
}

// appendPositions appends every position of the account to ps, in no
// particular order, and returns the result. Caller holds a.mu.
func (a *account) appendPositions(ps []Position) []Position {
	for _, byMarket := range a.positions {
		for _, p := range byMarket {
			ps = append(ps, p)
		}
	}
	return ps
}
