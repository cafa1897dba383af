package core

import (
	"encoding/binary"
	"fmt"
	"iter"
	"math/bits"

	"github.com/google/uuid"

	"marketd/core/money"
)

// positionTable is an account's positions, every currency's, in one
// open-addressing hash table whose slots are the positions themselves,
// keyed by market and currency, probed linearly; a slot whose Market is
// uuid.Nil is empty (no market has the nil ID). A trade reads and
// writes its trader's position: the Go maps this replaces (one per
// currency, keyed by market) hashed the key and probed twice per trade,
// once for the lookup and once for the store (runtime.mapaccess2 and
// runtime.mapassign, with memhash128 and memequal128), and reached the
// slot through the map's header and table. Here the hash is a multiply,
// and the store finds the slot again in the lines the lookup brought in
// (docs/PERFORMANCE.md, "A trade's working set over 1,024 accounts").
//
// The zero value is an empty table. The table is at most three quarters
// full, so a probe ends at an empty slot.
type positionTable struct {
	slots []Position // len 0 or a power of two
	n     int        // positions held
}

// positionTableMinSlots is the slots of a table's first array: an
// account's first position, then room to grow.
const positionTableMinSlots = 2

// positionHash mixes a market ID and a currency into a slot hash. Market
// IDs are random (version 4) in production, but tests make them in
// sequence: the multiply spreads either form over the high bits, from
// which positionHome takes the slot.
func positionHash(m uuid.UUID, cur money.Currency) uint64 {
	lo := binary.LittleEndian.Uint64(m[:8])
	hi := binary.LittleEndian.Uint64(m[8:])
	return (lo ^ bits.RotateLeft64(hi, 29) ^ uint64(cur)) * 0x9e3779b97f4a7c15
}

// positionHome returns the first slot a probe for hash h looks at in a
// table of mask+1 slots.
func positionHome(h uint64, mask int) int { return int(h>>32) & mask }

// find returns the slot of market m's position in cur, or the empty slot
// that ends its probe, and whether the position is there. The table must
// have slots.
func (t *positionTable) find(m uuid.UUID, cur money.Currency) (int, bool) {
	mask := len(t.slots) - 1
	for i := positionHome(positionHash(m, cur), mask); ; i = (i + 1) & mask {
		p := &t.slots[i]
		if p.Market == m && p.Currency == cur {
			return i, true
		}
		if p.Market == uuid.Nil {
			return i, false
		}
	}
}

// get returns market m's position in cur.
func (t *positionTable) get(m uuid.UUID, cur money.Currency) (Position, bool) {
	if t.n == 0 {
		return Position{}, false
	}
	i, ok := t.find(m, cur)
	if !ok {
		return Position{}, false
	}
	return t.slots[i], true
}

// put stores p, or removes the position of p's market and currency when
// p is Closed.
func (t *positionTable) put(p *Position) {
	if p.Market == uuid.Nil {
		panic(fmt.Sprintf("BUG: a position in the nil market: %+v", *p))
	}
	if p.Closed {
		t.remove(p.Market, p.Currency)
		return
	}
	if len(t.slots) > 0 {
		if i, ok := t.find(p.Market, p.Currency); ok {
			t.slots[i] = *p
			return
		}
	}
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	i, _ := t.find(p.Market, p.Currency)
	t.slots[i] = *p
	t.n++
}

// grow doubles the table (or makes its first), placing every position
// again.
func (t *positionTable) grow() {
	old := t.slots
	t.slots = make([]Position, max(2*len(old), positionTableMinSlots))
	for i := range old {
		if old[i].Market != uuid.Nil {
			j, _ := t.find(old[i].Market, old[i].Currency)
			t.slots[j] = old[i]
		}
	}
}

// remove deletes market m's position in cur, if held, and moves the
// positions after it in its probe run back over the hole (backward-shift
// deletion), so that every probe still ends at the first empty slot and
// no tombstone is left to slow the next ones.
func (t *positionTable) remove(m uuid.UUID, cur money.Currency) {
	if t.n == 0 {
		return
	}
	hole, ok := t.find(m, cur)
	if !ok {
		return
	}
	mask := len(t.slots) - 1
	for j := (hole + 1) & mask; t.slots[j].Market != uuid.Nil; j = (j + 1) & mask {
		// The entry at j may move to the hole when its home is not
		// cyclically in (hole, j]: its probe passes the hole first.
		h := positionHome(positionHash(t.slots[j].Market, t.slots[j].Currency), mask)
		if (j-h)&mask >= (j-hole)&mask {
			t.slots[hole] = t.slots[j]
			hole = j
		}
	}
	t.slots[hole] = Position{}
	t.n--
}

// all returns every position, in no particular order.
func (t *positionTable) all() iter.Seq[*Position] {
	return func(yield func(*Position) bool) {
		for i := range t.slots {
			if t.slots[i].Market != uuid.Nil && !yield(&t.slots[i]) {
				return
			}
		}
	}
}

// check reports the first way the table breaks its form: a count that is
// not its positions', a table fuller than three quarters, a Closed
// position kept, or a position that its own probe does not find. The
// invariant checker runs it.
func (t *positionTable) check() error {
	held := 0
	for i := range t.slots {
		p := &t.slots[i]
		if p.Market == uuid.Nil {
			continue
		}
		held++
		if p.Closed {
			return fmt.Errorf("closed position in market %s kept", p.Market)
		}
		if j, ok := t.find(p.Market, p.Currency); !ok || j != i {
			return fmt.Errorf("position in market %s %s at slot %d is not found by its probe", p.Market, p.Currency, i)
		}
	}
	switch {
	case held != t.n:
		return fmt.Errorf("%d positions counted, %d held", t.n, held)
	case len(t.slots)&(len(t.slots)-1) != 0 || held*4 > len(t.slots)*3:
		return fmt.Errorf("%d positions in %d slots", held, len(t.slots))
	}
	return nil
}

// position returns the account's position in market m's book in cur.
// Caller holds a.mu, or owns the state alone (recovery).
func (a *account) position(m uuid.UUID, cur money.Currency) (Position, bool) {
	return a.refs().positions.get(m, cur)
}

// putPosition stores p's after-image, or removes the position when p is
// Closed. Caller holds a.mu, or owns the state alone (recovery).
func (a *account) putPosition(p *Position) { a.refs().positions.put(p) }

// positionCount returns how many positions the account holds, in every
// currency. Caller holds a.mu.
func (a *account) positionCount() int { return a.refs().positions.n }

// appendPositions appends every position of the account to ps, in no
// particular order, and returns the result. Caller holds a.mu.
func (a *account) appendPositions(ps []Position) []Position {
	for p := range a.refs().positions.all() {
		ps = append(ps, *p)
	}
	return ps
}
