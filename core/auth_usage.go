package core

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// maxUsageKeys bounds the keys of one usage record. A key's image encodes
// to at most about 400 bytes (a 64-rune name is up to 256 of them), so
// 50,000 keep a record near 20 MiB: inside the log's 64 MiB and 1<<20-item
// limits with room to spare. More keys take more records.
const maxUsageKeys = 50_000

// DefaultUsageFlushInterval is how often key usage is logged by default:
// total_requests may lag by at most a second after a crash (docs/API.md,
// "Authentication").
const DefaultUsageFlushInterval = time.Second

// AuthenticateKey looks an API key up by the SHA-256 of its secret and
// counts one request made with it. A key that does not exist, is revoked or
// has expired is ErrKeyNotFound and is not counted. The key returned
// includes this request in TotalRequests and LastUsedAt.
//
// It runs on every authenticated request, so it writes no record and takes
// no exclusive lock: the count goes to atomics in the key's entry, under
// the auth table's shared lock, and FlushKeyUsage logs it later. That lock
// also admits it in place of the engine's gate, whose shared cache line
// every request wrote twice (docs/PERFORMANCE.md, "The hop to the market's
// goroutine"): Close takes it exclusively once the engine is closed and
// before its last flush, so a count made under it is flushed, and a later
// one is refused (ErrClosed), as it could miss that flush.
func (e *Engine) AuthenticateKey(hash [32]byte) (Key, error) {
	now := e.now()
	t := &e.st.auth
	// The shard of hash: a bot's requests take the same one, and other
	// bots' requests on the other core seldom do (shardlock.go).
	s := t.mu.rlockShard(hash[0])
	defer s.RUnlock()
	if e.closed.Load() {
		return Key{}, ErrClosed
	}
	ent := t.byHash[hash]
	if ent == nil || !ent.key.Active(now) {
		return Key{}, ErrKeyNotFound
	}
	k := ent.key
	k.TotalRequests = ent.requests.Add(1)
	k.LastUsedAt = raiseInt64(&ent.lastUsed, now)
	return k, nil
}

// FlushKeyUsage logs the usage of every key counted since the key's last
// logged image, as one KindKeyUsage record of after-images (more when over
// maxUsageKeys keys), and returns once they are durable. It returns how
// many keys it logged; when no key was used it writes nothing. The context
// is looked at between records: a record handed to the journal is always
// awaited.
func (e *Engine) FlushKeyUsage(ctx context.Context) (int, error) {
	if err := e.enter(); err != nil {
		return 0, err
	}
	defer e.leave()
	return e.flushUsage(ctx, maxUsageKeys)
}

// flushUsage is FlushKeyUsage once admitted, or from Close once nothing can
// count a use any more, with at most batchKeys keys per record.
func (e *Engine) flushUsage(ctx context.Context, batchKeys int) (int, error) {
	ents := e.st.auth.unloggedKeys()
	n := 0
	for len(ents) > 0 {
		if err := ctx.Err(); err != nil {
			return n, fmt.Errorf("core: flush key usage: %w", err)
		}
		batch := ents[:min(len(ents), batchKeys)]
		ents = ents[len(batch):]
		logged, err := e.flushUsageBatch(batch)
		if err != nil {
			return n, fmt.Errorf("core: flush key usage: %w", err)
		}
		n += logged
	}
	return n, nil
}

// flushUsageBatch logs the usage of the given keys that still have some to
// log: another record (a revocation, a concurrent flush) may have logged it
// since they were picked. The exclusive lock is held from reading the
// counters until the record is applied, so the images are exact and, since
// every record writing key images does the same, their order in the log is
// the order of their counts.
func (e *Engine) flushUsageBatch(ents []*keyEntry) (int, error) {
	now := e.now()
	t := &e.st.auth
	t.mu.Lock()
	changes := make([]KeyChange, 0, len(ents))
	for _, ent := range ents {
		if ent.unlogged() {
			changes = append(changes, KeyChange{Prev: ent.lsn, Key: ent.current()})
		}
	}
	if len(changes) == 0 {
		t.mu.Unlock()
		return 0, nil
	}
	if err := e.commitAuth(t, KindKeyUsage, now, changes, nil); err != nil {
		return 0, err
	}
	return len(changes), nil
}

// unloggedKeys returns the keys with usage not yet logged. It walks every
// key under the shared lock, so requests keep being authenticated
// meanwhile; the flush holds the exclusive lock only for the keys it logs.
func (t *authTable) unloggedKeys() []*keyEntry {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []*keyEntry
	for _, ent := range t.keys {
		if ent.unlogged() {
			out = append(out, ent)
		}
	}
	return out
}

// raiseInt64 sets v to x unless it is already higher, and returns v after.
func raiseInt64(v *atomic.Int64, x int64) int64 {
	for {
		old := v.Load()
		if old >= x {
			return old
		}
		if v.CompareAndSwap(old, x) {
			return x
		}
	}
}

// raiseUint64 sets v to x unless it is already higher.
func raiseUint64(v *atomic.Uint64, x uint64) {
	for {
		old := v.Load()
		if old >= x || v.CompareAndSwap(old, x) {
			return
		}
	}
}

// WaitAuthDurable returns once the key or the session of hash, as last
// changed, is durable (at once when there is none), or the journal's
// error. A request refused for a key whose revocation, or a session whose
// end, is not durable yet is answered only then, as every refusal that
// rests on a change; the accepting path never calls it.
func (e *Engine) WaitAuthDurable(ctx context.Context, hash [32]byte) error {
	t := &e.st.auth
	t.mu.RLock()
	var lsn uint64
	if ent := t.byHash[hash]; ent != nil {
		lsn = ent.lsn
	}
	if ent := t.sessions[hash]; ent != nil {
		lsn = max(lsn, ent.lsn)
	}
	t.mu.RUnlock()
	return e.refuse(ctx, lsn, nil)
}
