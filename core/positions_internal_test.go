package core

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

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
	a := testAccount()
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

// TestPositionTableAgreesWithAMap runs random puts and closes, over
// markets with random IDs and with IDs made in sequence (whose bits differ
// in few places), against a map of the same positions: after every step
// each position of the map is found, with its values, the absent ones are
// not, the count and the listing agree, and the table keeps its form
// (positionTable.check).
func TestPositionTableAgreesWithAMap(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0x706f73))
	t.Logf("seed %d", seed)
	// Markets, and steps enough to fill the table and empty it in turns.
	for _, markets := range []int{3, 64, 500} {
		t.Run(fmt.Sprint(markets, " markets"), func(t *testing.T) {
			ids := make([]uuid.UUID, markets)
			for i := range ids {
				if i%2 == 0 {
					ids[i] = uuid.New()
				} else {
					ids[i][15], ids[i][14] = byte(i), byte(i>>8)
				}
			}
			type key struct {
				m   uuid.UUID
				cur money.Currency
			}
			want := make(map[key]Position)
			var tab positionTable
			for step := range 12 * markets {
				p := Position{Market: ids[rng.IntN(len(ids))], Currency: money.Currency(rng.IntN(int(money.NumCurrencies))),
					Shares: [NumSides]money.Amount{money.Amount(rng.Int64N(1000)), money.Amount(step)}}
				// Closes are rarer than puts, so that the table fills.
				p.Closed = rng.IntN(3) == 0
				tab.put(&p)
				if p.Closed {
					delete(want, key{p.Market, p.Currency})
				} else {
					want[key{p.Market, p.Currency}] = p
				}
				if err := tab.check(); err != nil {
					t.Fatalf("seed %d step %d (%+v): %v", seed, step, p, err)
				}
				if tab.n != len(want) {
					t.Fatalf("seed %d step %d: %d positions, want %d", seed, step, tab.n, len(want))
				}
				listed := 0
				for q := range tab.all() {
					listed++
					if w, ok := want[key{q.Market, q.Currency}]; !ok || w != *q {
						t.Fatalf("seed %d step %d: listed %+v, want %+v (present %v)", seed, step, *q, w, ok)
					}
				}
				if listed != len(want) {
					t.Fatalf("seed %d step %d: %d listed, want %d", seed, step, listed, len(want))
				}
				for _, m := range ids {
					for c := range money.NumCurrencies {
						cur := money.Currency(c)
						w, wok := want[key{m, cur}]
						got, ok := tab.get(m, cur)
						if ok != wok || got != w {
							t.Fatalf("seed %d step %d: %s %s is %+v (present %v), want %+v (present %v)", seed, step, m, cur, got, ok, w, wok)
						}
					}
				}
			}
		})
	}
}
