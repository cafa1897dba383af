package core_test

import (
	"testing"
	"time"

	"marketd/core"
)

// TestPurgeAuth purges, through the log, the sessions expired or revoked
// and the keys revoked or expired more than the retention ago, in records
// of a bounded number of items; replay and a snapshot taken after the
// purge but replayed from before it give the same state.
func TestPurgeAuth(t *testing.T) {
	h := newHarness(t)
	acct := h.account("owner", core.RoleSpeculator, 0)
	active := h.newKey(acct, 1, 0)
	revoked := h.newKey(acct, 2, 0)
	expiring := h.newKey(acct, 3, time.Hour)
	if _, err := h.e.RevokeKey(h.ctx, acct, revoked.ID); err != nil {
		t.Fatal(err)
	}
	now := h.clock.Now()
	sessions := []core.Session{
		{Hash: [32]byte{1}, Account: acct, CreatedAt: now.UnixNano(), ExpiresAt: now.Add(7 * 24 * time.Hour).UnixNano()},
		{Hash: [32]byte{2}, Account: acct, CreatedAt: now.UnixNano(), ExpiresAt: now.Add(7 * 24 * time.Hour).UnixNano()},
		{Hash: [32]byte{3}, Account: acct, CreatedAt: now.UnixNano(), ExpiresAt: now.Add(time.Minute).UnixNano()},
	}
	for _, s := range sessions {
		if err := h.e.CreateSession(h.ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.e.RevokeSession(h.ctx, sessions[1].Hash); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(2 * time.Minute)

	// Now: the revoked and the expired session go; every key stays
	// listed, the revoked one for the retention.
	if n, err := core.PurgeAuthBatch(h.ctx, h.e, 1); err != nil || n != 2 {
		t.Fatalf("first purge: %d, %v; want 2", n, err)
	}
	if _, ok := h.e.SessionByHash(sessions[1].Hash); ok {
		t.Fatal("revoked session still there")
	}
	if _, ok := h.e.SessionByHash(sessions[0].Hash); !ok {
		t.Fatal("active session purged")
	}
	if ks := h.e.Keys(acct); len(ks) != 3 {
		t.Fatalf("%d keys listed within the retention, want 3", len(ks))
	}
	h.check()
	from := h.j.Contiguous()

	// Past the retention: the revoked and the expired key go too, and the
	// last session, expired by then.
	h.clock.Advance(core.KeyRetention + time.Hour)
	if n, err := core.PurgeAuthBatch(h.ctx, h.e, 2); err != nil || n != 3 {
		t.Fatalf("purge past the retention: %d, %v; want 3", n, err)
	}
	ks := h.e.Keys(acct)
	if len(ks) != 1 || ks[0].ID != active.ID {
		t.Fatalf("keys after the retention %+v, want only %s", ks, active.ID)
	}
	for _, k := range []core.Key{revoked, expiring} {
		if _, ok := h.e.KeyByHash(k.Hash); ok {
			t.Fatalf("key %s still found by its hash", k.ID)
		}
	}
	if n, err := h.e.PurgeAuth(h.ctx); err != nil || n != 0 {
		t.Fatalf("purge with nothing left: %d, %v", n, err)
	}
	h.check()

	recs := h.j.Records(t)
	purges := 0
	for _, r := range recs {
		if r.Kind == core.KindAuthPurged {
			purges++
			if n := len(r.Keys) + len(r.Sessions); n > 2 {
				t.Fatalf("a purge record of %d items, bound 2", n)
			}
		}
	}
	if purges != 4 {
		t.Fatalf("%d purge records, want 4 (2 of 1 item, then 2 and 1)", purges)
	}
	requireEqual(t, h.replayed(), h.e.State())
	// A snapshot taken after the purge, replayed from before it: the
	// purge records find their objects gone already.
	var images []*core.Record
	if _, err := h.e.State().Capture(1000, func(r *core.Record) error {
		images = append(images, r.Clone())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	requireEqual(t, fromImage(t, images, recs, from), h.e.State())
}
