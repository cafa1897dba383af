package core

import (
	"slices"
	"sync/atomic"

	"github.com/google/uuid"
)

// authTable holds API keys and sessions, looked up by the SHA-256 of the
// secret on every authenticated request. Reads take mu shared; changes take
// it exclusively and hold it until their record is appended. Counting a
// key's use is a read: it takes mu shared and changes only the entry's
// atomics, so every record that writes a key's image, built under mu held
// exclusively, sees every use counted before it and none during it.
type authTable struct {
	mu        shardedRWMutex // AuthenticateKey reads under one shard (shardlock.go)
	keys      map[uuid.UUID]*keyEntry
	byHash    map[[32]byte]*keyEntry
	byAccount map[uuid.UUID][]*keyEntry
	sessions  map[[32]byte]*sessionEntry
}

// keyEntry is one key. key is its image as last logged (or replayed), lsn
// that image's record; requests and lastUsed are its usage counted since,
// logged or not, which reads report. They are never below the image's
// TotalRequests and LastUsedAt while the engine runs; FlushKeyUsage logs
// them when they are above (auth_usage.go).
type keyEntry struct {
	lsn      uint64
	key      Key
	requests atomic.Uint64
	lastUsed atomic.Int64 // Unix nanoseconds
}

type sessionEntry struct {
	lsn     uint64
	session Session
}

func (t *authTable) init() {
	t.keys = make(map[uuid.UUID]*keyEntry)
	t.byHash = make(map[[32]byte]*keyEntry)
	t.byAccount = make(map[uuid.UUID][]*keyEntry)
	t.sessions = make(map[[32]byte]*sessionEntry)
}

// putKey stores a key's after-image from replay or a snapshot, where the
// image's usage is the truth. Caller holds t.mu, or owns the state alone
// (recovery).
func (t *authTable) putKey(seq uint64, k Key) {
	e := t.storeKey(seq, k)
	e.requests.Store(k.TotalRequests)
	e.lastUsed.Store(k.LastUsedAt)
}

// applyKey stores a key's after-image made by a live operation. Its usage
// only ever raises the counters: an image built from lower counts must not
// take back requests already counted (and answered). Caller holds t.mu.
func (t *authTable) applyKey(seq uint64, k Key) {
	e := t.storeKey(seq, k)
	raiseUint64(&e.requests, k.TotalRequests)
	raiseInt64(&e.lastUsed, k.LastUsedAt)
}

// storeKey stores a key's image, creating its entry. Caller holds t.mu.
func (t *authTable) storeKey(seq uint64, k Key) *keyEntry {
	e := t.keys[k.ID]
	if e == nil {
		e = &keyEntry{}
		t.keys[k.ID] = e
		t.byAccount[k.Account] = append(t.byAccount[k.Account], e)
	}
	e.lsn = seq
	e.key = k
	t.byHash[k.Hash] = e
	return e
}

// current returns the key with its usage counted so far, logged or not.
// Caller holds authTable.mu, shared at least.
func (e *keyEntry) current() Key {
	k := e.key
	k.TotalRequests = e.requests.Load()
	k.LastUsedAt = e.lastUsed.Load()
	return k
}

// unlogged reports whether the key has usage its logged image lacks.
// Caller holds authTable.mu, shared at least.
func (e *keyEntry) unlogged() bool {
	return e.requests.Load() != e.key.TotalRequests || e.lastUsed.Load() != e.key.LastUsedAt
}

// removeKey drops a key and its lookups. Caller holds t.mu, or owns the
// state alone (recovery).
func (t *authTable) removeKey(id uuid.UUID) {
	e := t.keys[id]
	if e == nil {
		return
	}
	delete(t.keys, id)
	if t.byHash[e.key.Hash] == e {
		delete(t.byHash, e.key.Hash)
	}
	own := t.byAccount[e.key.Account]
	if i := slices.Index(own, e); i >= 0 {
		own = slices.Delete(own, i, i+1)
	}
	if len(own) == 0 {
		delete(t.byAccount, e.key.Account)
	} else {
		t.byAccount[e.key.Account] = own
	}
}

// putSession stores a session's after-image. Caller holds t.mu.
func (t *authTable) putSession(seq uint64, s Session) {
	e := t.sessions[s.Hash]
	if e == nil {
		e = &sessionEntry{}
		t.sessions[s.Hash] = e
	}
	e.lsn = seq
	e.session = s
}

// activeKeys counts an account's keys neither revoked nor expired at now.
// Caller holds t.mu.
func (t *authTable) activeKeys(account uuid.UUID, nowNanos int64) int {
	n := 0
	for _, e := range t.byAccount[account] {
		if e.key.Active(nowNanos) {
			n++
		}
	}
	return n
}

// Active reports whether the key can authenticate at nowNanos: not
// revoked, and not expired (an ExpiresAt of 0 means never).
func (k *Key) Active(nowNanos int64) bool {
	return k.RevokedAt == 0 && (k.ExpiresAt == 0 || nowNanos < k.ExpiresAt)
}

// Active reports whether the session can authenticate at nowNanos. A session
// always has an expiry (seven days, docs/API.md, "Authentication"), so an
// ExpiresAt of 0 counts as expired, unlike a key's.
func (s *Session) Active(nowNanos int64) bool {
	return s.RevokedAt == 0 && nowNanos < s.ExpiresAt
}

// lockOwnKey locks the table and finds one of an account's keys. It
// returns ErrKeyNotFound, with the table unlocked again, when the key does
// not exist or belongs to another account.
func (t *authTable) lockOwnKey(account, keyID uuid.UUID) (*keyEntry, error) {
	t.mu.Lock()
	ent := t.keys[keyID]
	if ent == nil || ent.key.Account != account {
		t.mu.Unlock()
		return nil, ErrKeyNotFound
	}
	return ent, nil
}
