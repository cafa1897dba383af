package core

import (
	"cmp"
	"context"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Key limits (docs/API.md, "POST /api/keys").
const (
	MaxActiveKeys   = 10
	MaxKeyNameRunes = 64
	KeyPrefixLen    = 17
)

// NewKey describes an API key to store: the caller draws the secret and
// passes only its SHA-256 and its prefix.
type NewKey struct {
	Account uuid.UUID
	Name    string
	Hash    [32]byte
	Prefix  string
	Scopes  Scopes
	Tier    Tier
	// Lifetime is how long the key lasts from its creation; 0: no expiry.
	// A duration rather than a time, so that the expiry is counted from the
	// creation time the engine records (a rotation then keeps the exact
	// lifetime).
	Lifetime time.Duration
}

func (r *NewKey) validate() error {
	switch n := utf8.RuneCountInString(r.Name); {
	case n == 0:
		return fieldErr("name", "is required")
	case n > MaxKeyNameRunes:
		return fieldErr("name", "must be at most %d characters", MaxKeyNameRunes)
	}
	switch {
	case r.Scopes == 0 || r.Scopes&^AllScopes != 0:
		return fieldErr("scopes", "must be a non-empty subset of read, trade, admin")
	case r.Tier > TierUnlimited:
		return fieldErr("rate_limit_tier", "unknown tier")
	case len(r.Prefix) != KeyPrefixLen:
		return fieldErr("prefix", "must be %d characters", KeyPrefixLen)
	}
	return nil
}

// CreateKey stores a new API key for an account, at most MaxActiveKeys
// active at once, and answers once it is durable. Only an admin account may
// hold a key with the admin scope.
func (e *Engine) CreateKey(ctx context.Context, req NewKey) (Key, error) {
	if err := req.validate(); err != nil {
		return Key{}, err
	}
	a, err := e.enterAccount(req.Account)
	if err != nil {
		return Key{}, err
	}
	defer e.leave()
	if req.Scopes.Has(ScopeAdmin) && e.role(a) != RoleAdmin {
		return Key{}, ErrAdminRequired
	}
	now := e.now()
	t := &e.st.auth
	t.mu.Lock()
	if t.activeKeys(req.Account, now) >= MaxActiveKeys {
		// The refusal rests on the account's keys as they are, some of
		// them perhaps not durable yet: it waits for them.
		var lsn uint64
		for _, ent := range t.byAccount[req.Account] {
			lsn = max(lsn, ent.lsn)
		}
		t.mu.Unlock()
		return Key{}, e.refuse(ctx, lsn, ErrKeyLimit)
	}
	k := Key{ID: e.ids.next(), Account: req.Account, Name: req.Name, Hash: req.Hash, Prefix: req.Prefix,
		Scopes: req.Scopes, Tier: req.Tier, CreatedAt: now}
	if req.Lifetime > 0 {
		k.ExpiresAt = now + int64(req.Lifetime)
	}
	err = e.commitAuth(t, KindKeyCreated, now, []KeyChange{{Key: k}}, nil)
	return k, err
}

// RevokeKey revokes one of an account's keys at once. Revoking a revoked
// key changes nothing and answers it as it is.
func (e *Engine) RevokeKey(ctx context.Context, account, keyID uuid.UUID) (Key, error) {
	if err := e.enter(); err != nil {
		return Key{}, err
	}
	defer e.leave()
	// With an Idempotency-Key, the caller's account holds the answer: it
	// is locked before the auth table (doc.go, "Lock order").
	caller, err := e.idemCaller(ctx)
	if err != nil {
		return Key{}, err
	}
	if caller != nil {
		caller.mu.Lock()
	}
	unlockCaller := func() {
		if caller != nil {
			caller.mu.Unlock()
		}
	}
	now := e.now()
	t := &e.st.auth
	ent, err := t.lockOwnKey(account, keyID)
	if err != nil {
		unlockCaller()
		return Key{}, err
	}
	k := ent.current() // the image carries the usage counted so far
	if k.RevokedAt != 0 {
		lsn := ent.lsn
		t.mu.Unlock()
		unlockCaller()
		return k, e.refuse(ctx, lsn, nil)
	}
	k.RevokedAt = now
	p := &pending{rec: Record{Kind: KindKeyRevoked, Time: now, Keys: []KeyChange{{Prev: ent.lsn, Key: k}}}}
	if caller != nil {
		p.answerAs(ctx, caller, k)
	}
	done := make(chan error, 1)
	e.commit(p, done, nil)
	t.mu.Unlock()
	unlockCaller()
	return k, <-done
}

// RotateKey revokes an active key and stores its replacement, with the same
// name, scopes, tier and lifetime, in one record. hash and prefix are the new
// secret's.
func (e *Engine) RotateKey(ctx context.Context, account, keyID uuid.UUID, hash [32]byte, prefix string) (Key, error) {
	if len(prefix) != KeyPrefixLen {
		return Key{}, fieldErr("prefix", "must be %d characters", KeyPrefixLen)
	}
	if err := e.enter(); err != nil {
		return Key{}, err
	}
	defer e.leave()
	now := e.now()
	t := &e.st.auth
	ent, err := t.lockOwnKey(account, keyID)
	if err != nil {
		return Key{}, err
	}
	if !ent.key.Active(now) {
		lsn := ent.lsn // a revocation not durable yet must be before the answer
		t.mu.Unlock()
		return Key{}, e.refuse(ctx, lsn, ErrKeyNotFound)
	}
	old := ent.current() // the image carries the usage counted so far
	old.RevokedAt = now
	k := Key{ID: e.ids.next(), Account: account, Name: old.Name, Hash: hash, Prefix: prefix,
		Scopes: old.Scopes, Tier: old.Tier, CreatedAt: now}
	if old.ExpiresAt != 0 {
		k.ExpiresAt = now + (old.ExpiresAt - old.CreatedAt)
	}
	err = e.commitAuth(t, KindKeyCreated, now, []KeyChange{{Prev: ent.lsn, Key: old}, {Key: k}}, nil)
	return k, err
}

// CreateSession stores a session for an account (its token's SHA-256).
func (e *Engine) CreateSession(ctx context.Context, s Session) error {
	if _, err := e.enterAccount(s.Account); err != nil {
		return err
	}
	defer e.leave()
	now := e.now()
	s.CreatedAt, s.RevokedAt = now, 0
	t := &e.st.auth
	t.mu.Lock()
	if t.sessions[s.Hash] != nil {
		t.mu.Unlock()
		return fieldErr("session", "token already in use")
	}
	return e.commitAuth(t, KindSessionCreated, now, nil, []SessionChange{{Session: s}})
}

// RevokeSession ends a session at once (logout).
func (e *Engine) RevokeSession(ctx context.Context, hash [32]byte) error {
	if err := e.enter(); err != nil {
		return err
	}
	defer e.leave()
	now := e.now()
	t := &e.st.auth
	t.mu.Lock()
	ent := t.sessions[hash]
	if ent == nil {
		t.mu.Unlock()
		return ErrSessionNotFound
	}
	if ent.session.RevokedAt != 0 {
		lsn := ent.lsn
		t.mu.Unlock()
		return e.refuse(ctx, lsn, ErrSessionNotFound)
	}
	s := ent.session
	s.RevokedAt = now
	return e.commitAuth(t, KindSessionRevoked, now, nil, []SessionChange{{Prev: ent.lsn, Session: s}})
}

// commitAuth commits a change of keys or sessions, unlocks the table, and
// waits for durability. Caller holds t.mu; commitAuth releases it.
func (e *Engine) commitAuth(t *authTable, kind Kind, now int64, keys []KeyChange, sessions []SessionChange) error {
	p := &pending{rec: Record{Kind: kind, Time: now, Keys: keys, Sessions: sessions}}
	done := make(chan error, 1)
	e.commit(p, done, nil)
	t.mu.Unlock()
	return <-done
}

// KeyByHash finds a key by the SHA-256 of its secret, whatever its state,
// with its usage counted so far, flushed or not. It counts no use: an
// authenticated request calls AuthenticateKey.
func (e *Engine) KeyByHash(hash [32]byte) (Key, bool) {
	t := &e.st.auth
	t.mu.RLock()
	defer t.mu.RUnlock()
	if ent := t.byHash[hash]; ent != nil {
		return ent.current(), true
	}
	return Key{}, false
}

// Keys returns an account's keys, oldest first, whatever their state, with
// their usage counted so far, flushed or not.
func (e *Engine) Keys(account uuid.UUID) []Key {
	t := &e.st.auth
	t.mu.RLock()
	defer t.mu.RUnlock()
	ents := t.byAccount[account]
	out := make([]Key, len(ents))
	for i, ent := range ents {
		out[i] = ent.current()
	}
	// The list is in creation order only when built by live operations or
	// replay; a snapshot restores keys in map order.
	slices.SortStableFunc(out, func(a, b Key) int {
		if c := cmp.Compare(a.CreatedAt, b.CreatedAt); c != 0 {
			return c
		}
		return compareIDs(a.ID, b.ID)
	})
	return out
}

// SessionByHash finds a session by the SHA-256 of its token, whatever its
// state.
func (e *Engine) SessionByHash(hash [32]byte) (Session, bool) {
	t := &e.st.auth
	t.mu.RLock()
	defer t.mu.RUnlock()
	if ent := t.sessions[hash]; ent != nil {
		return ent.session, true
	}
	return Session{}, false
}

func (e *Engine) role(a *account) Role {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.info.Role
}
