package core_test

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"marketd/core"
)

// TestChangePassword: a password change stores the new hash and ends every
// other active session of the account, in records of at most perRecord
// sessions with the hash in the last, keeps the caller's session and other
// accounts' sessions, and replays to the same state.
func TestChangePassword(t *testing.T) {
	for _, perRecord := range []int{3, core.MaxSessionsPerRecord} {
		t.Run(fmt.Sprintf("%d per record", perRecord), func(t *testing.T) {
			h := newHarness(t)
			acct := h.account("pat", core.RoleSpeculator, 0)
			other := h.account("quinn", core.RoleSpeculator, 0)
			session := func(a [16]byte, i int) [32]byte {
				hash := sha256.Sum256(fmt.Appendf(nil, "%x-%d", a, i))
				if err := h.e.CreateSession(h.ctx, core.Session{Hash: hash, Account: a, ExpiresAt: h.clock.Now().Add(1e12).UnixNano()}); err != nil {
					t.Fatal(err)
				}
				return hash
			}
			var mine [][32]byte
			for i := range 8 {
				mine = append(mine, session(acct, i))
			}
			theirs := session(other, 0)
			before := len(h.j.Records(t))
			if err := core.ChangePasswordChunked(h.ctx, h.e, acct, []byte("new-hash"), mine[0], perRecord); err != nil {
				t.Fatal(err)
			}
			v, _ := h.e.Account(acct)
			if string(v.Info.PasswordHash) != "new-hash" {
				t.Errorf("password hash %q", v.Info.PasswordHash)
			}
			now := h.clock.Now().UnixNano()
			for i, hash := range mine {
				s, _ := h.e.SessionByHash(hash)
				if active := s.Active(now); active != (i == 0) {
					t.Errorf("session %d active %v after the change", i, active)
				}
			}
			if s, _ := h.e.SessionByHash(theirs); !s.Active(now) {
				t.Error("another account's session ended")
			}
			recs := h.j.Records(t)[before:]
			wantRecs := (7 + perRecord - 1) / perRecord
			if len(recs) != wantRecs {
				t.Fatalf("%d records, want %d", len(recs), wantRecs)
			}
			for i, r := range recs {
				want := core.KindSessionRevoked
				if i == len(recs)-1 {
					want = core.KindPasswordChanged
				}
				if r.Kind != want || len(r.Sessions) > perRecord {
					t.Errorf("record %d: kind %v with %d sessions, want %v with at most %d", i, r.Kind, len(r.Sessions), want, perRecord)
				}
			}
			h.check()
			requireEqual(t, h.replayed(), h.e.State())
			// A reset keeps no session.
			if err := h.e.ChangePassword(h.ctx, acct, []byte("reset-hash"), [32]byte{}); err != nil {
				t.Fatal(err)
			}
			if s, _ := h.e.SessionByHash(mine[0]); s.Active(h.clock.Now().UnixNano()) {
				t.Error("a reset kept a session")
			}
			h.check()
			requireEqual(t, h.replayed(), h.e.State())
		})
	}
}
