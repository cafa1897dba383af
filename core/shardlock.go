package core

import (
	"sync"
	"unsafe"
)

// readShards is how many read locks a shardedRWMutex spreads its readers
// over: enough that the 64 connections of the closed loop, one key each,
// seldom share one between the two cores.
const readShards = 16

// shardedRWMutex is a reader/writer lock whose readers lock one of
// readShards read locks, each a cache line's length from the next (on a
// line of its own when the first starts a line; nothing aligns the state,
// so otherwise a lock may share part of a line with a neighbour), and
// whose writers lock them all. A sync.RWMutex's RLock and RUnlock write its
// reader count, one cache line that every reader on every core shares:
// the auth table's lock, taken by every request made with an API key, so
// moved that line between the cores twice per request
// (docs/PERFORMANCE.md, "The closed loop's server CPU, piece by piece").
// Readers of one shard exclude writers as a whole lock's readers do,
// because a writer holds every shard.
type shardedRWMutex struct {
	shards [readShards]struct {
		sync.RWMutex
		_ [cacheLineBytes - unsafe.Sizeof(sync.RWMutex{})%cacheLineBytes]byte
	}
}

// Lock locks every shard for writing, in order, so that two writers
// cannot deadlock.
func (m *shardedRWMutex) Lock() {
	for i := range m.shards {
		m.shards[i].Lock()
	}
}

// Unlock unlocks what Lock locked.
func (m *shardedRWMutex) Unlock() {
	for i := len(m.shards) - 1; i >= 0; i-- {
		m.shards[i].Unlock()
	}
}

// RLock locks the first shard for reading: for the readers that are not
// on a request's path, where one line shared by all of them costs little.
func (m *shardedRWMutex) RLock() { m.shards[0].RLock() }

// RUnlock unlocks what RLock locked.
func (m *shardedRWMutex) RUnlock() { m.shards[0].RUnlock() }

// rlockShard locks the shard of key for reading and returns it for the
// RUnlock. key should spread the readers evenly (a byte of a SHA-256).
func (m *shardedRWMutex) rlockShard(key byte) *sync.RWMutex {
	s := &m.shards[int(key)%readShards].RWMutex
	s.RLock()
	return s
}
