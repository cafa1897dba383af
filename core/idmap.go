package core

import (
	"encoding/binary"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
)

// idShards is the number of shards of an idMap: enough that the goroutines
// of a 2-core machine rarely meet on one when they add entries, few enough
// to range over cheaply.
const idShards = 64

// idMapMinSlots is the least table of a shard that holds anything.
const idMapMinSlots = 16

// idMap is a concurrent map from IDs to objects (*T), sharded by the ID's
// last byte (random in a version 4 UUID), whose lookups write no memory:
// every trade looks up its account and its market, and the read lock of a
// shard (two atomic writes to a cache line that every caller of that
// shard shares) was most of a lookup's cost (docs/PERFORMANCE.md, "The
// hop to the market's goroutine"). sync.Map reads without locks too, but
// boxes every uuid key into an interface, an allocation per lookup.
// Entries are never deleted.
//
// A slot holds the object's arenaRef, not a pointer to it, and load
// resolves the ref in mem: the tables then hold no pointers, and the
// collector's mark phase does not scan them, nor follow a million
// pointers into the arena's arrays (docs/PERFORMANCE.md, "The account map
// without pointers").
//
// Each shard is an open-addressing table with linear probing, replaced
// whole (twice the size) when it passes three quarters full: writers hold
// the shard's mutex, readers load the current table and its slots with
// atomic loads only. A table once replaced is never written again, and
// holds every entry stored before it was, so a reader that still walks it
// misses only entries stored concurrently with its lookup.
type idMap[T, P any] struct {
	shards [idShards]idShard
	mem    *arena[T, P] // where the refs point; set before the map is used
}

type idShard struct {
	mu  sync.Mutex // held by writers
	n   int        // entries; guarded by mu
	tab atomic.Pointer[idTable]
	// The shards' writers do not share cache lines with each other's
	// readers: 8 + 8 + 8 + 40 = 64 bytes.
	_ [40]byte
}

// idTable is one shard's table: a power-of-two number of slots.
type idTable struct {
	slots []idSlot
}

// idSlot holds an entry: its ID, stored before ref, so that a reader that
// sees ref sees the ID, and compares it without reading the object, whose
// first cache line the market's goroutine writes per trade (a market's
// LSN, an account's mutex).
type idSlot struct {
	lo, hi atomic.Uint64 // the ID's two halves
	ref    atomic.Uint32 // the object's arenaRef + 1; 0 while the slot is free
}

// idHalves splits an ID into the words a slot holds.
func idHalves(id uuid.UUID) (lo, hi uint64) {
	return binary.LittleEndian.Uint64(id[:8]), binary.LittleEndian.Uint64(id[8:])
}

// idHash mixes both halves of an ID, so that IDs that are not random (the
// house's, fixed ones in tests) spread as well as random ones.
func idHash(lo, hi uint64) uint64 {
	h := (lo ^ bits.RotateLeft64(hi, 31)) * 0x9e3779b97f4a7c15
	return h ^ h>>32
}

func (m *idMap[T, P]) shard(id uuid.UUID) *idShard { return &m.shards[id[15]%idShards] }

// load returns the object stored for id, without writing to memory.
func (m *idMap[T, P]) load(id uuid.UUID) (*T, bool) {
	t := m.shard(id).tab.Load()
	if t == nil {
		return nil, false
	}
	lo, hi := idHalves(id)
	mask := uint64(len(t.slots) - 1)
	for i := idHash(lo, hi) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		ref := s.ref.Load()
		if ref == 0 {
			return nil, false
		}
		if s.lo.Load() == lo && s.hi.Load() == hi {
			return m.mem.at(arenaRef(ref - 1)), true
		}
	}
}

// store sets the object for id: the one of mem that ref names.
func (m *idMap[T, P]) store(id uuid.UUID, ref arenaRef) {
	s := m.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tab.Load()
	if t == nil || (s.n+1)*4 > len(t.slots)*3 {
		t = s.grow(t, max(idMapMinSlots, 2*s.capacity()))
	}
	lo, hi := idHalves(id)
	if insertSlot(t, lo, hi, uint32(ref)+1) {
		s.n++
	}
}

// capacity is the number of slots of the shard's table. Caller holds mu.
func (s *idShard) capacity() int {
	if t := s.tab.Load(); t != nil {
		return len(t.slots)
	}
	return 0
}

// grow publishes a new table of size slots (a power of two) holding old's
// entries, and returns it. Caller holds mu.
func (s *idShard) grow(old *idTable, size int) *idTable {
	t := &idTable{slots: make([]idSlot, size)}
	if old != nil {
		for i := range old.slots {
			o := &old.slots[i]
			if ref := o.ref.Load(); ref != 0 {
				insertSlot(t, o.lo.Load(), o.hi.Load(), ref)
			}
		}
	}
	s.tab.Store(t)
	return t
}

// insertSlot puts ref (an arenaRef + 1) at the slot of the ID of halves
// lo and hi in t, replacing an object stored for the same ID; it reports
// whether the entry is new. The caller holds the shard's mu, and t has a
// free slot.
func insertSlot(t *idTable, lo, hi uint64, ref uint32) bool {
	mask := uint64(len(t.slots) - 1)
	for i := idHash(lo, hi) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.ref.Load() == 0 {
			s.lo.Store(lo)
			s.hi.Store(hi)
			s.ref.Store(ref)
			return true
		}
		if s.lo.Load() == lo && s.hi.Load() == hi {
			s.ref.Store(ref)
			return false
		}
	}
}

// reserve makes room for n more values, spread evenly over the shards as
// random IDs are, in shards that are still empty (recovery's first step).
func (m *idMap[T, P]) reserve(n int) {
	perShard := n/idShards + n/idShards/8 + 16 // the spread of a binomial count, and some
	// The least power of two that holds perShard below three quarters.
	size := 1 << bits.Len(uint(perShard*4/3))
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		if s.n == 0 && s.capacity() < size {
			s.grow(nil, size)
		}
		s.mu.Unlock()
	}
}

// rangeValues calls fn for every value until fn returns false. fn runs with
// no lock held, so it may take other locks; values stored during the walk
// may or may not be seen, values stored before it are.
func (m *idMap[T, P]) rangeValues(fn func(*T) bool) {
	for i := range m.shards {
		t := m.shards[i].tab.Load()
		if t == nil {
			continue
		}
		for j := range t.slots {
			if ref := t.slots[j].ref.Load(); ref != 0 && !fn(m.mem.at(arenaRef(ref-1))) {
				return
			}
		}
	}
}

// len returns the number of values stored. Values stored during the call
// may or may not be counted.
func (m *idMap[T, P]) len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += s.n
		s.mu.Unlock()
	}
	return n
}
