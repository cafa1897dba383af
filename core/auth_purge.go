package core

import (
	"context"
	"time"
)

// Purging of sessions and keys that can never authenticate again
// (docs/API.md, "GET /api/keys"): without it, every login and every key
// ever made stays in memory, in every snapshot and in every scan of an
// account's keys. A session goes once it has expired or was revoked (it
// is shown nowhere); a key once it was revoked or expired more than
// KeyRetention ago, so that its owner still sees it for a while. Each
// purge is a record (KindAuthPurged) carrying the last images with
// Purged set, at most maxPurgeItems of them, so that replay removes what
// the live engine removed.

const (
	// KeyRetention is how long a revoked or expired key stays listed
	// before it is purged.
	KeyRetention = 30 * 24 * time.Hour
	// DefaultPurgeInterval is how often the engine purges by default.
	DefaultPurgeInterval = time.Minute
	// maxPurgeItems bounds the keys and sessions one purge record removes:
	// about 150 bytes each, 1.5 MB a record.
	maxPurgeItems = 10_000
)

// PurgeAuth removes, through the log, the sessions expired or revoked and
// the keys revoked or expired more than KeyRetention ago, in records of
// at most maxPurgeItems; it returns how many it removed once they are
// durable.
func (e *Engine) PurgeAuth(ctx context.Context) (int, error) {
	return e.purgeAuth(ctx, maxPurgeItems)
}

// purgeAuth is PurgeAuth with the record bound as a parameter, for tests.
func (e *Engine) purgeAuth(ctx context.Context, limit int) (int, error) {
	total := 0
	for {
		n, err := e.purgeBatch(limit)
		total += n
		if err != nil || n < limit {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// purgeBatch commits one purge record of at most limit items.
func (e *Engine) purgeBatch(limit int) (int, error) {
	if err := e.enter(); err != nil {
		return 0, err
	}
	defer e.leave()
	now := e.now()
	t := &e.st.auth
	t.mu.Lock()
	var keys []KeyChange
	for _, ent := range t.keys {
		if len(keys) == limit {
			break
		}
		if keyPurgeable(&ent.key, now) {
			keys = append(keys, KeyChange{Prev: ent.lsn, Key: ent.current(), Purged: true})
		}
	}
	var sessions []SessionChange
	for _, ent := range t.sessions {
		if len(keys)+len(sessions) == limit {
			break
		}
		if !ent.session.Active(now) {
			sessions = append(sessions, SessionChange{Prev: ent.lsn, Session: ent.session, Purged: true})
		}
	}
	if len(keys)+len(sessions) == 0 {
		t.mu.Unlock()
		return 0, nil
	}
	return len(keys) + len(sessions), e.commitAuth(t, KindAuthPurged, now, keys, sessions)
}

// keyPurgeable reports whether k was revoked or expired more than
// KeyRetention before nowNanos.
func keyPurgeable(k *Key, nowNanos int64) bool {
	cutoff := nowNanos - int64(KeyRetention)
	return k.RevokedAt != 0 && k.RevokedAt <= cutoff || k.ExpiresAt != 0 && k.ExpiresAt <= cutoff
}

// purgeLoop purges every PurgeInterval.
func (e *Engine) purgeLoop() {
	defer e.wg.Done()
	t := time.NewTicker(e.cfg.PurgeInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), e.cfg.PurgeInterval)
			// What is left is purged on the next tick; the only failure
			// is the journal's, which every later operation reports.
			_, _ = e.PurgeAuth(ctx)
			cancel()
		case <-e.stopping:
			return
		}
	}
}
