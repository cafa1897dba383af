package core

import (
	"testing"

	"github.com/google/uuid"

	"marketd/core/money"
)

// TestPositionsKeptPerMarketAndCurrency holds the positions' store to a
// market-and-currency key: one market's KP and USDC positions are two,
// a Closed after-image removes only its own, and the count and the list
// see every currency.
func TestPositionsKeptPerMarketAndCurrency(t *testing.T) {
	m1, m2 := uuid.New(), uuid.New()
	pos := func(m uuid.UUID, cur money.Currency, yes money.Amount) Position {
		return Position{Market: m, Currency: cur, Shares: [NumSides]money.Amount{yes, 0}}
	}
	type want struct {
		market uuid.UUID
		cur    money.Currency
		yes    money.Amount // -1: absent
	}
	steps := []struct {
		name  string
		put   Position
		close bool
		count int
		want  []want
	}{
		{"first KP", pos(m1, money.KP, 5), false, 1, []want{{m1, money.KP, 5}, {m1, money.USDC, -1}}},
		{"same market in USDC", pos(m1, money.USDC, 7), false, 2, []want{{m1, money.KP, 5}, {m1, money.USDC, 7}}},
		{"second market", pos(m2, money.KP, 9), false, 3, []want{{m2, money.KP, 9}, {m2, money.USDC, -1}}},
		{"KP replaced", pos(m1, money.KP, 6), false, 3, []want{{m1, money.KP, 6}, {m1, money.USDC, 7}}},
		{"USDC closed", pos(m1, money.USDC, 0), true, 2, []want{{m1, money.KP, 6}, {m1, money.USDC, -1}, {m2, money.KP, 9}}},
		{"closing an absent one", pos(m2, money.USDC, 0), true, 2, []want{{m2, money.KP, 9}, {m2, money.USDC, -1}}},
	}
	var a account
	for _, s := range steps {
		p := s.put
		p.Closed = s.close
		a.putPosition(&p)
		if got := a.positionCount(); got != s.count {
			t.Fatalf("%s: %d positions, want %d", s.name, got, s.count)
		}
		if got := len(a.appendPositions(nil)); got != s.count {
			t.Fatalf("%s: %d positions listed, want %d", s.name, got, s.count)
		}
		for _, w := range s.want {
			got, ok := a.position(w.market, w.cur)
			switch {
			case w.yes < 0 && ok:
				t.Fatalf("%s: position %s %s present: %+v", s.name, w.market, w.cur, got)
			case w.yes >= 0 && (!ok || got.Shares[Yes] != w.yes || got.Market != w.market || got.Currency != w.cur):
				t.Fatalf("%s: position %s %s is %+v (present %v), want yes %s", s.name, w.market, w.cur, got, ok, w.yes)
			}
		}
	}
}
