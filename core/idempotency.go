package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Limits and defaults of idempotent requests (docs/API.md, "Idempotent
// requests").
const (
	// MaxIdempotencyKeyBytes bounds a key: 1 to 255 printable ASCII bytes.
	MaxIdempotencyKeyBytes = 255
	// MaxIdemAnswerBytes bounds one stored answer. A trade's answer is
	// about 400 bytes; a larger one is a bug of the caller's encoder.
	MaxIdemAnswerBytes = 8 << 10
	// DefaultIdempotencyRetention is how long a key is kept by default.
	DefaultIdempotencyRetention = 24 * time.Hour
	// DefaultIdempotencyKeys is the default cap of live keys per account.
	DefaultIdempotencyKeys = 1000
)

// Errors of idempotent requests; none changes anything.
var (
	// ErrIdempotencyKeyReused reports a key already used, within its
	// retention window, by a request with another fingerprint.
	ErrIdempotencyKeyReused = errors.New("idempotency key reused with a different request")
	// ErrIdempotencyKeyLimit reports an account holding its cap of live
	// keys: a new key waits for an old one to expire, none is evicted.
	ErrIdempotencyKeyLimit = errors.New("idempotency key limit reached")
	// ErrIdempotencyReplay reports an operation whose key and index already
	// have a stored answer: the caller answers with it (Engine.Idempotent).
	ErrIdempotencyReplay = errors.New("idempotent request already answered")
)

// Idempotent names an operation as the one answering a request with an
// Idempotency-Key: its record stores the key, the request's fingerprint and
// the answer, so that they are durable exactly when the change is.
type Idempotent struct {
	Key         string
	Fingerprint [32]byte
	// Index is the item's position in a batch; 0 for a single request.
	Index uint32
}

// IdemEntry is the stored answer of an idempotent request (one item of a
// batch): held by the account that made it, logged in its AccountChange.
// Answer is opaque to core: transport encodes it and replays it.
type IdemEntry struct {
	Key         string
	Index       uint32
	Fingerprint [32]byte
	Time        int64 // Unix nanoseconds at which the request ran
	Status      uint16
	Answer      []byte
}

// IdempotencyLimits are how long a key is kept and how many live keys an
// account may hold. A state replays with no limits: every entry of the log
// since the snapshot is kept (so that a retention longer than the default
// loses nothing), and the engine, given the configured limits, drops the
// expired ones once at start. Live, the application of a record drops
// expired keys when the account is at its cap (putIdem).
type IdempotencyLimits struct {
	// Retention is how long a key is kept; 0: for ever (replay).
	Retention time.Duration
	// Keys caps the live keys of an account; 0: no cap (replay).
	Keys int
}

// withDefaults returns l with DefaultIdempotencyRetention and
// DefaultIdempotencyKeys in place of zero fields.
func (l IdempotencyLimits) withDefaults() IdempotencyLimits {
	l.Retention = positiveOr(l.Retention, DefaultIdempotencyRetention)
	l.Keys = positiveOr(l.Keys, DefaultIdempotencyKeys)
	return l
}

// live reports whether an entry made at t is within the retention window
// at nowNanos.
func (l IdempotencyLimits) live(t, nowNanos int64) bool {
	return l.Retention == 0 || nowNanos-t < int64(l.Retention)
}

// idemKey is what an account holds for one key: its entries in index
// order, the first inline. Every key but a batch's has one entry, so that
// storing it costs the map's slot and nothing more: replaying a log of
// keyed trades made a one-entry slice per record, a fifth of the
// allocations of its replay (docs/PERFORMANCE.md).
type idemKey struct {
	first IdemEntry   // the entry of the lowest index
	more  []IdemEntry // a batch's other entries, in index order
}

// has reports whether the key holds an entry of index i.
func (k *idemKey) has(i uint32) bool {
	return k.first.Index == i || slices.ContainsFunc(k.more, func(x IdemEntry) bool { return x.Index == i })
}

// entries returns a new slice of the key's entries, in index order.
func (k *idemKey) entries() []IdemEntry {
	es := make([]IdemEntry, 0, 1+len(k.more))
	return append(append(es, k.first), k.more...)
}

// put stores ie, replacing the entry of its index.
func (k *idemKey) put(ie IdemEntry) {
	switch {
	case ie.Index == k.first.Index:
		k.first = ie
		return
	case ie.Index < k.first.Index:
		ie, k.first = k.first, ie
	}
	i, found := slices.BinarySearchFunc(k.more, ie.Index, func(x IdemEntry, idx uint32) int { return cmp.Compare(x.Index, idx) })
	if found {
		k.more[i] = ie
		return
	}
	k.more = slices.Insert(k.more, i, ie)
}

// DropExpiredIdempotency forgets every account's keys expired at now. The
// engine calls it at start; tests call it on a replayed state to compare
// it, as seen at now, with a live one.
//
// A replayed state may hold, under one key, the entries of an expired
// request and of a later one that reused the key with the same body
// (putIdem cannot tell them apart without the retention): they are first
// separated as the live engine separated them, so that the later request's
// entries are neither dropped with the expired ones nor answered with them.
func (s *State) DropExpiredIdempotency(l IdempotencyLimits, now time.Time) {
	nowNanos := now.UnixNano()
	s.eachAccountLocked(0, 1, func(a *account) {
		idem := a.idem() // nil, or the account's own map, changed in place
		for key, k := range idem {
			k = k.lastRequest(l)
			idem[key] = k
			if !l.live(k.first.Time, nowNanos) {
				delete(idem, key)
			}
		}
	})
}

// lastRequest returns the entries of the key's last request: it applies
// putIdem's rule with the retention of l to the entries in the order they
// were made, so that an entry made once the request before it had expired
// starts afresh. The entries of one request are returned as they are.
func (k idemKey) lastRequest(l IdempotencyLimits) idemKey {
	if len(k.more) == 0 || l.Retention == 0 {
		return k
	}
	byTime := k.entries()
	slices.SortStableFunc(byTime, func(x, y IdemEntry) int { return cmp.Compare(x.Time, y.Time) })
	out := idemKey{first: byTime[0]}
	for _, ie := range byTime[1:] {
		if !l.live(out.first.Time, ie.Time) {
			out = idemKey{first: ie}
			continue
		}
		out.put(ie)
	}
	return out
}

// putIdem stores an entry made by a record. A key whose entries expired
// before the new one is a new key;
// a new key that finds the account at its cap first drops every expired
// key, which checkIdem has found room among. Caller holds a.mu.
func (a *account) putIdem(ie IdemEntry, lim IdempotencyLimits) {
	m := a.editMore()
	if m.idem == nil {
		m.idem = make(map[string]idemKey)
	}
	k, ok := m.idem[ie.Key]
	if ok && !lim.live(k.first.Time, ie.Time) {
		ok = false
	}
	if ok && lim.Retention == 0 && (k.first.Fingerprint != ie.Fingerprint || k.has(ie.Index)) {
		// Replay, without the retention: the live engine stored this
		// entry, so the request before it had expired (a live one would
		// have refused another body, or answered the same item from its
		// record). A reuse with the same body and a new item cannot be
		// told apart here: DropExpiredIdempotency separates it.
		ok = false
	}
	if !ok {
		if lim.Keys > 0 && len(m.idem) >= lim.Keys {
			for key, old := range m.idem {
				if !lim.live(old.first.Time, ie.Time) {
					delete(m.idem, key)
				}
			}
		}
		m.idem[ie.Key] = idemKey{first: ie}
		return
	}
	k.put(ie)
	m.idem[ie.Key] = k
}

// checkIdem runs before an idempotent operation builds its record, and
// changes nothing: a key used by another request within its window is
// refused, an index already answered is a replay, and a new key is refused
// when the account holds its cap of live keys. Caller holds a.mu.
func (e *Engine) checkIdem(a *account, req *Idempotent, nowNanos int64) error {
	lim := e.cfg.Idempotency
	k, ok := a.idem()[req.Key]
	if ok && lim.live(k.first.Time, nowNanos) {
		if k.first.Fingerprint != req.Fingerprint {
			return ErrIdempotencyKeyReused
		}
		if k.has(req.Index) {
			return ErrIdempotencyReplay
		}
		return nil // another item of the same batch
	}
	if len(a.idem()) < lim.Keys {
		return nil
	}
	live := 0
	for _, old := range a.idem() {
		if lim.live(old.first.Time, nowNanos) {
			live++
		}
	}
	if live >= lim.Keys {
		return ErrIdempotencyKeyLimit
	}
	return nil
}

// idemEntry returns the entry an idempotent operation stores: its answer,
// encoded by answer, must fit MaxIdemAnswerBytes.
func idemEntry(req *Idempotent, nowNanos int64, answer []byte) IdemEntry {
	if len(answer) > MaxIdemAnswerBytes {
		panic(fmt.Sprintf("BUG: idempotent answer of %d bytes, limit %d", len(answer), MaxIdemAnswerBytes))
	}
	return IdemEntry{Key: req.Key, Index: req.Index, Fingerprint: req.Fingerprint, Time: nowNanos,
		Status: 200, Answer: answer}
}

// Idempotent returns the stored entries of an account's key, in index
// order, once the records that stored them are durable; none when the key
// is unknown or expired. The entries share their Answer bytes with the
// state: never modify them.
func (e *Engine) Idempotent(ctx context.Context, account uuid.UUID, key string) ([]IdemEntry, error) {
	a := e.st.account(account)
	if a == nil {
		return nil, nil
	}
	now := e.now()
	a.mu.Lock()
	k, ok := a.idem()[key]
	lsn := a.lsn
	var es []IdemEntry
	if ok && e.cfg.Idempotency.live(k.first.Time, now) {
		es = k.entries()
	}
	a.mu.Unlock()
	if len(es) == 0 {
		return nil, nil
	}
	// The entries may belong to a record applied but not yet durable.
	if err := e.j.WaitDurable(ctx, lsn); err != nil {
		return nil, err
	}
	return es, nil
}

// IdempotencyKeys returns how many keys an account holds, expired ones
// not dropped yet included: for tests of the cap.
func (e *Engine) IdempotencyKeys(account uuid.UUID) int {
	a := e.st.account(account)
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.idem())
}
