package core

import (
	"sync"

	"github.com/google/uuid"
)

// idShards is the number of shards of an idMap: enough that the goroutines
// of a 2-core machine rarely meet on one, few enough to range over cheaply.
const idShards = 64

// idMap is a concurrent map from IDs to V, sharded by the ID's last byte
// (random in a version 4 UUID). It replaces sync.Map on the trade path,
// where sync.Map boxed every uuid key into an interface: an allocation per
// lookup. Entries are never deleted.
type idMap[V any] struct {
	shards [idShards]idShard[V]
}

type idShard[V any] struct {
	mu sync.RWMutex
	m  map[uuid.UUID]V // guarded by mu
}

func (m *idMap[V]) shard(id uuid.UUID) *idShard[V] { return &m.shards[id[15]%idShards] }

// load returns the value stored for id.
func (m *idMap[V]) load(id uuid.UUID) (V, bool) {
	s := m.shard(id)
	s.mu.RLock()
	v, ok := s.m[id]
	s.mu.RUnlock()
	return v, ok
}

// store sets the value for id.
func (m *idMap[V]) store(id uuid.UUID, v V) {
	s := m.shard(id)
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[uuid.UUID]V)
	}
	s.m[id] = v
	s.mu.Unlock()
}

// reserve makes room for n more values, spread evenly over the shards as
// random IDs are, in shards that are still empty (recovery's first step).
func (m *idMap[V]) reserve(n int) {
	perShard := n/idShards + n/idShards/8 + 16 // the spread of a binomial count, and some
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		if len(s.m) == 0 {
			s.m = make(map[uuid.UUID]V, perShard)
		}
		s.mu.Unlock()
	}
}

// rangeValues calls fn for every value until fn returns false. Each shard
// is copied under its lock and fn runs unlocked, so fn may take other
// locks; values stored during the walk may or may not be seen, values
// stored before it are.
func (m *idMap[V]) rangeValues(fn func(V) bool) { m.rangePart(0, 1, fn) }

// rangePart is rangeValues over part of the shards, those whose index is
// part modulo parts: parts goroutines, one for each part, see every value
// once between them.
func (m *idMap[V]) rangePart(part, parts int, fn func(V) bool) {
	var buf []V
	for i := part; i < len(m.shards); i += parts {
		s := &m.shards[i]
		s.mu.RLock()
		buf = buf[:0]
		for _, v := range s.m {
			buf = append(buf, v)
		}
		s.mu.RUnlock()
		for _, v := range buf {
			if !fn(v) {
				return
			}
		}
	}
}

// len returns the number of values stored. Values stored during the call
// may or may not be counted.
func (m *idMap[V]) len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}
