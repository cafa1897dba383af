package core

import (
	"encoding/binary"

	"github.com/google/uuid"
)

// Slots of a Preparer's caches: a few thousand accounts trading at once
// (TestScaleTimeToReady's 4,096) mostly stay in it, in 192 KiB.
const (
	preparedAccountSlots = 8192
	preparedMarketSlots  = 1024
)

// Preparer is Prepare for one goroutine, remembering the objects it found
// in caches of its own: with two decoding workers looking up the same
// accounts and markets, taking and releasing the read locks of the state's
// maps moved their cache lines from core to core at every lookup (a fifth
// of the workers' lookup time in the CPU profile of BenchmarkRecover). An
// object once found stays the one found, since objects are never removed
// or replaced; one not found is not remembered, since a record not applied
// yet may create it.
type Preparer struct {
	s     *State
	accts *[preparedAccountSlots]cachedObject[account]
	mkts  *[preparedMarketSlots]cachedObject[market]
}

// cachedObject is one slot of a Preparer's cache: obj nil is empty.
type cachedObject[T any] struct {
	id  uuid.UUID
	obj *T
}

// NewPreparer returns a Preparer of s's objects, for one goroutine.
func (s *State) NewPreparer() *Preparer {
	return &Preparer{
		s:     s,
		accts: new([preparedAccountSlots]cachedObject[account]),
		mkts:  new([preparedMarketSlots]cachedObject[market]),
	}
}

// Prepare is State.Prepare.
func (p *Preparer) Prepare(rec *Record, out *Prepared) {
	out.accts = out.accts[:0]
	for i := range rec.Accounts {
		out.accts = append(out.accts, cachedLookup(p.accts[:], rec.Accounts[i].ID, p.s.account))
	}
	out.mkts = out.mkts[:0]
	for i := range rec.Markets {
		out.mkts = append(out.mkts, cachedLookup(p.mkts[:], rec.Markets[i].ID, p.s.market))
	}
}

// cachedLookup returns the object of id, from cache when it holds it, else
// from look, remembering what look finds. len(cache) is a power of two.
// The slot is chosen by the ID's last bytes, random in the version 4 UUIDs
// the engine makes.
func cachedLookup[T any](cache []cachedObject[T], id uuid.UUID, look func(uuid.UUID) *T) *T {
	c := &cache[int(binary.LittleEndian.Uint16(id[14:]))&(len(cache)-1)]
	if c.obj != nil && c.id == id {
		return c.obj
	}
	obj := look(id)
	if obj != nil {
		*c = cachedObject[T]{id: id, obj: obj}
	}
	return obj
}
