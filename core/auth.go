package core

import (
	"sync"

	"github.com/google/uuid"
)

// authTable holds API keys and sessions, looked up by the SHA-256 of the
// secret on every authenticated request. Reads take mu shared; changes take
// it exclusively and hold it until their record is appended.
type authTable struct {
	mu        sync.RWMutex
	keys      map[uuid.UUID]*keyEntry
	byHash    map[[32]byte]*keyEntry
	byAccount map[uuid.UUID][]*keyEntry
	sessions  map[[32]byte]*sessionEntry
}

type keyEntry struct {
	lsn uint64
	key Key
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

// putKey stores a key's after-image. Lock should be held.
func (t *authTable) putKey(seq uint64, k Key) {
	e := t.keys[k.ID]
	if e == nil {
		e = &keyEntry{}
		t.keys[k.ID] = e
		t.byAccount[k.Account] = append(t.byAccount[k.Account], e)
	}
	e.lsn = seq
	e.key = k
	t.byHash[k.Hash] = e
}

// putSession stores a session's after-image. Lock should be held.
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
// Lock should be held.
func (t *authTable) activeKeys(account uuid.UUID, nowNanos int64) int {
	n := 0
	for _, e := range t.byAccount[account] {
		if e.key.active(nowNanos) {
			n++
		}
	}
	return n
}

// active reports whether the key can authenticate at nowNanos.
func (k *Key) active(nowNanos int64) bool {
	return k.RevokedAt == 0 && (k.ExpiresAt == 0 || nowNanos < k.ExpiresAt)
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
