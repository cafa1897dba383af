package core

import (
	"context"

	"github.com/google/uuid"
)

// MaxSessionsPerRecord bounds the sessions one record ends, so that a
// password change of an account with any number of sessions builds records
// of bounded size (about 80 bytes a session: 330 KB at most).
const MaxSessionsPerRecord = 4096

// ChangePassword stores an account's new password hash (computed by the
// caller) and ends every other active session of the account, keeping the
// one whose token hash is keep (the zero hash keeps none: an operator's
// reset). It answers once all of it is durable.
//
// The last record (KindPasswordChanged) holds the new hash and the last
// MaxSessionsPerRecord sessions ended; sessions beyond those are ended
// first, in records of their own (KindSessionRevoked). A crash between them
// leaves the old password with fewer sessions, never the new password with
// sessions it should have ended. The account's lock and the auth table's
// are held from the scan to the last commit, so no session can be created
// for the account in between.
func (e *Engine) ChangePassword(ctx context.Context, account uuid.UUID, hash []byte, keep [32]byte) error {
	return e.changePassword(ctx, account, hash, keep, MaxSessionsPerRecord)
}

// changePassword is ChangePassword with at most perRecord sessions ended
// per record.
func (e *Engine) changePassword(ctx context.Context, account uuid.UUID, hash []byte, keep [32]byte, perRecord int) error {
	switch {
	case len(hash) == 0:
		return fieldErr("password", "hash is required")
	case len(hash) > MaxPasswordHashBytes:
		return fieldErr("password", "hash too long")
	}
	a, err := e.enterAccount(account)
	if err != nil {
		return err
	}
	defer e.leave()
	now := e.now()
	t := &e.st.auth
	a.mu.Lock()
	t.mu.Lock()
	var ended []SessionChange
	for h, ent := range t.sessions {
		if ent.session.Account == account && h != keep && ent.session.Active(now) {
			s := ent.session
			s.RevokedAt = now
			ended = append(ended, SessionChange{Prev: ent.lsn, Session: s})
		}
	}
	var dones []chan error
	for len(ended) > perRecord {
		p := &pending{rec: Record{Kind: KindSessionRevoked, Time: now, Sessions: ended[:perRecord]}}
		done := make(chan error, 1)
		dones = append(dones, done)
		if !e.commit(p, done, nil) {
			break
		}
		ended = ended[perRecord:]
	}
	// A failed commit above leaves more than perRecord: its done has the
	// error, and the password stays as it was.
	if len(ended) <= perRecord {
		info := a.infoOf()
		info.PasswordHash = hash
		p := &pending{rec: Record{Kind: KindPasswordChanged, Time: now, Sessions: ended}}
		p.addAccount(a).Info = &info
		done := make(chan error, 1)
		dones = append(dones, done)
		e.commit(p, done, nil)
	}
	t.mu.Unlock()
	a.mu.Unlock()
	var commitErr error
	for _, done := range dones {
		if derr := <-done; derr != nil && commitErr == nil {
			commitErr = derr
		}
	}
	return commitErr
}
