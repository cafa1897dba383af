package core

import (
	"testing"
	"time"
)

// TestShardedRWMutexWriterExcludesEveryShard: a reader of any shard, and
// of RLock's, waits for a writer, and a writer waits for a reader of any
// shard; readers of different shards do not wait for each other.
func TestShardedRWMutexWriterExcludesEveryShard(t *testing.T) {
	const wait = 20 * time.Millisecond
	for key := range readShards + 1 { // the last wraps around to shard 0
		var m shardedRWMutex
		m.Lock()
		got := make(chan struct{})
		go func() {
			m.rlockShard(byte(key)).RUnlock()
			close(got)
		}()
		select {
		case <-got:
			t.Fatalf("key %d: a reader got its shard while a writer held the lock", key)
		case <-time.After(wait):
		}
		m.Unlock()
		<-got

		s := m.rlockShard(byte(key))
		other := m.rlockShard(byte(key + 1)) // another shard: no wait
		locked := make(chan struct{})
		go func() {
			m.Lock()
			close(locked)
			m.Unlock()
		}()
		select {
		case <-locked:
			t.Fatalf("key %d: a writer got the lock while a reader held a shard", key)
		case <-time.After(wait):
		}
		other.RUnlock()
		s.RUnlock()
		<-locked
	}
	var m shardedRWMutex
	m.RLock()
	locked := make(chan struct{})
	go func() { m.Lock(); close(locked); m.Unlock() }()
	select {
	case <-locked:
		t.Fatal("a writer got the lock while RLock's reader held it")
	case <-time.After(wait):
	}
	m.RUnlock()
	<-locked
}
