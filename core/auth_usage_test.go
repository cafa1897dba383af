package core_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/internal/memjournal"
)

// newKey stores a read key for acct whose secret's hash starts with tag.
func (h *harness) newKey(acct uuid.UUID, tag byte, lifetime time.Duration) core.Key {
	h.t.Helper()
	k, err := h.e.CreateKey(h.ctx, core.NewKey{Account: acct, Name: fmt.Sprintf("k%d", tag),
		Hash: [32]byte{tag, 0xA5}, Prefix: "svc_live_01234567", Scopes: core.ScopeRead, Lifetime: lifetime})
	if err != nil {
		h.t.Fatalf("create key %d: %v", tag, err)
	}
	return k
}

// flush logs key usage and returns how many keys it logged.
func (h *harness) flush() int {
	h.t.Helper()
	n, err := h.e.FlushKeyUsage(h.ctx)
	if err != nil {
		h.t.Fatalf("FlushKeyUsage: %v", err)
	}
	return n
}

// requireLogged checks that no key usage is left to log, that replaying the
// log alone rebuilds the live state, and that the replayed keys count what
// want says (key ID -> requests).
func (h *harness) requireLogged(want map[uuid.UUID]uint64) {
	h.t.Helper()
	before := len(h.j.Records(h.t))
	if n := h.flush(); n != 0 {
		h.t.Fatalf("FlushKeyUsage after everything was logged = %d, want 0", n)
	}
	if after := len(h.j.Records(h.t)); after != before {
		h.t.Fatalf("a flush of nothing wrote %d records", after-before)
	}
	replayed := h.replayed()
	requireEqual(h.t, replayed, h.e.State())
	got := map[uuid.UUID]uint64{}
	for _, kc := range replayed.Canonical().Keys {
		got[kc.Key.ID] = kc.Key.TotalRequests
	}
	for id, n := range want {
		if got[id] != n {
			h.t.Fatalf("replayed key %s counts %d requests, want %d", id, got[id], n)
		}
	}
}

// Requests counted from many goroutines at once, while flushes run, are
// each counted once: every answer gets its own count, the counts read never
// go backwards, and the log holds the total.
func TestAuthenticateKeyCountsConcurrently(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 0)
	keys := []core.Key{h.newKey(alice, 1, 0), h.newKey(alice, 2, 0)}
	const workers, perWorker = 8, 500
	seen := make([][]uint64, workers) // counts answered, per worker
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			k := keys[w%len(keys)]
			for range perWorker {
				got, err := h.e.AuthenticateKey(k.Hash)
				if err != nil {
					t.Errorf("AuthenticateKey(%s) = %v", k.ID, err)
					return
				}
				seen[w] = append(seen[w], got.TotalRequests)
			}
		})
	}
	stop := make(chan struct{})
	var flushes sync.WaitGroup
	flushes.Go(func() {
		var last [2]uint64
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := h.e.FlushKeyUsage(h.ctx); err != nil {
				t.Errorf("FlushKeyUsage: %v", err)
				return
			}
			for i, k := range h.e.Keys(alice) {
				if k.TotalRequests < last[i] {
					t.Errorf("key %d count went back from %d to %d", i, last[i], k.TotalRequests)
				}
				last[i] = k.TotalRequests
			}
		}
	})
	wg.Wait()
	close(stop)
	flushes.Wait()

	const perKey = workers / 2 * perWorker
	for i, k := range keys {
		counts := map[uint64]bool{}
		for w := i; w < workers; w += len(keys) {
			for _, n := range seen[w] {
				if counts[n] || n == 0 || n > perKey {
					t.Fatalf("key %d: count %d answered twice or out of 1..%d", i, n, perKey)
				}
				counts[n] = true
			}
		}
		got, _ := h.e.KeyByHash(k.Hash)
		if got.TotalRequests != perKey || len(counts) != perKey || got.LastUsedAt == 0 {
			t.Fatalf("key %d: %d requests, %d distinct answers, last used %d; want %d",
				i, got.TotalRequests, len(counts), got.LastUsedAt, perKey)
		}
	}
	h.flush()
	h.requireLogged(map[uuid.UUID]uint64{keys[0].ID: perKey, keys[1].ID: perKey})
}

// A key that is unknown, revoked, rotated away or expired authenticates
// nothing and counts nothing; a revocation and a rotation log the usage
// counted before them, with no flush.
func TestAuthenticateKeyRefuses(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 0)
	revoked := h.newKey(alice, 1, 0)
	rotated := h.newKey(alice, 2, 0)
	expiring := h.newKey(alice, 3, time.Hour)
	for _, k := range []core.Key{revoked, rotated, rotated, expiring} {
		if _, err := h.e.AuthenticateKey(k.Hash); err != nil {
			t.Fatalf("AuthenticateKey(%s) before refusal: %v", k.Name, err)
		}
	}
	if _, err := h.e.RevokeKey(h.ctx, alice, revoked.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.RotateKey(h.ctx, alice, rotated.ID, [32]byte{9}, "svc_live_rotated1"); err != nil {
		t.Fatal(err)
	}
	if n := h.flush(); n != 1 { // only the expiring key's use is left
		t.Fatalf("FlushKeyUsage = %d keys, want 1", n)
	}
	h.clock.Advance(2 * time.Hour)

	cases := []struct {
		name  string
		hash  [32]byte
		count uint64 // requests the key keeps
	}{
		{"unknown", [32]byte{0xEE}, 0},
		{"revoked", revoked.Hash, 1},
		{"rotated away", rotated.Hash, 2},
		{"expired", expiring.Hash, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if k, err := h.e.AuthenticateKey(tc.hash); !errors.Is(err, core.ErrKeyNotFound) {
				t.Fatalf("AuthenticateKey(%x) = %+v, %v; want ErrKeyNotFound", tc.hash[:2], k, err)
			}
			if k, ok := h.e.KeyByHash(tc.hash); ok != (tc.count > 0) || k.TotalRequests != tc.count {
				t.Fatalf("KeyByHash(%x) = %d requests, %v; want %d", tc.hash[:2], k.TotalRequests, ok, tc.count)
			}
		})
	}
	h.requireLogged(map[uuid.UUID]uint64{revoked.ID: 1, rotated.ID: 2, expiring.ID: 1})
}

// FlushKeyUsage logs only keys used since their last image, splits them
// into bounded records, writes nothing when nothing was used, and leaves
// the usage counted when its context is done before a record.
func TestFlushKeyUsage(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 0)
	var keys []core.Key
	for i := range 6 {
		keys = append(keys, h.newKey(alice, byte(i), 0))
	}
	if n := h.flush(); n != 0 {
		t.Fatalf("FlushKeyUsage with no use = %d", n)
	}
	want := map[uuid.UUID]uint64{}
	for i, k := range keys[:5] { // keys[5] is never used
		for range i + 1 {
			if _, err := h.e.AuthenticateKey(k.Hash); err != nil {
				t.Fatal(err)
			}
		}
		want[k.ID] = uint64(i + 1)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	cancel()
	if n, err := h.e.FlushKeyUsage(ctx); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("FlushKeyUsage(cancelled) = %d, %v; want 0, context.Canceled", n, err)
	}
	before := len(h.j.Records(t))
	if n, err := core.FlushKeyUsageBatch(h.ctx, h.e, 2); n != 5 || err != nil {
		t.Fatalf("FlushKeyUsageBatch(2) = %d, %v; want 5 keys", n, err)
	}
	recs := h.j.Records(t)[before:]
	var sizes []int
	for _, r := range recs {
		if r.Kind != core.KindKeyUsage || len(r.Accounts)+len(r.Markets)+len(r.Sessions) > 0 || r.Supply != nil {
			t.Fatalf("usage record %+v holds more than keys", r)
		}
		sizes = append(sizes, len(r.Keys))
	}
	if fmt.Sprint(sizes) != "[2 2 1]" {
		t.Fatalf("usage records of %v keys, want [2 2 1]", sizes)
	}
	h.requireLogged(want)
}

// Close logs the usage not yet logged before it returns, and nothing is
// counted after it.
func TestCloseFlushesKeyUsage(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 0)
	k := h.newKey(alice, 1, 0)
	for range 3 {
		if _, err := h.e.AuthenticateKey(k.Hash); err != nil {
			t.Fatal(err)
		}
	}
	h.e.Close()
	recs := h.j.Records(t)
	if last := recs[len(recs)-1]; last.Kind != core.KindKeyUsage || len(last.Keys) != 1 || last.Keys[0].Key.TotalRequests != 3 {
		t.Fatalf("last record after Close: %+v, want the key's usage of 3", last)
	}
	if _, err := h.e.AuthenticateKey(k.Hash); !errors.Is(err, core.ErrClosed) {
		t.Fatalf("AuthenticateKey after Close = %v, want ErrClosed", err)
	}
	if _, err := h.e.FlushKeyUsage(h.ctx); !errors.Is(err, core.ErrClosed) {
		t.Fatalf("FlushKeyUsage after Close = %v, want ErrClosed", err)
	}
	h.e.Close()
	if n := len(h.j.Records(t)); n != len(recs) {
		t.Fatalf("a second Close wrote %d records", n-len(recs))
	}
	got := h.replayed().Canonical().Keys
	if len(got) != 1 || got[0].Key.TotalRequests != 3 {
		t.Fatalf("replayed keys %+v, want one with 3 requests", got)
	}
}

// The engine logs usage on its own every UsageFlushInterval.
func TestUsageFlushLoop(t *testing.T) {
	h := newHarnessConfig(t, core.Config{CloseInterval: -1, UsageFlushInterval: time.Millisecond})
	alice := h.account("alice", core.RoleSpeculator, 0)
	k := h.newKey(alice, 1, 0)
	if _, err := h.e.AuthenticateKey(k.Hash); err != nil {
		t.Fatal(err)
	}
	h.j.WaitUntil(func(s memjournal.State) bool {
		for _, r := range s.Records {
			if r.Kind == core.KindKeyUsage {
				return true
			}
		}
		return false
	})
	h.requireLogged(map[uuid.UUID]uint64{k.ID: 1})
}

// Requests counted while keys are rotated and revoked, usage flushed and
// snapshots captured: every answered request is in the final counts, the
// log replayed alone rebuilds them, and so does every capture loaded and
// replayed from where the journal was when it began.
func TestKeyUsageCaptureAndReplay(t *testing.T) {
	h := newHarness(t)
	alice := h.account("alice", core.RoleSpeculator, 0)
	var keys []core.Key
	for i := range 6 {
		keys = append(keys, h.newKey(alice, byte(i), 0))
	}
	var answered [6]atomic.Uint64
	const workers, perWorker = 6, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 11))
			for i := range perWorker {
				if w == 0 && i > 0 && i%100 == 0 {
					h.changeKey(alice, keys[i/100-1]) // keys 0 to 2 rotated, 3 revoked
				}
				if w == 1 && i%50 == 0 {
					if _, err := h.e.FlushKeyUsage(h.ctx); err != nil {
						t.Errorf("FlushKeyUsage: %v", err)
					}
				}
				n := r.IntN(len(keys))
				_, err := h.e.AuthenticateKey(keys[n].Hash)
				switch {
				case err == nil:
					answered[n].Add(1)
				case !errors.Is(err, core.ErrKeyNotFound):
					t.Errorf("AuthenticateKey: %v", err)
				}
			}
		})
	}
	type capture struct {
		from   uint64
		images []*core.Record
	}
	var caps []capture
	for range 5 {
		c := capture{from: h.j.Contiguous()}
		if _, err := h.e.State().Capture(2, func(r *core.Record) error {
			c.images = append(c.images, r.Clone())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		caps = append(caps, c)
	}
	wg.Wait()
	want := map[uuid.UUID]uint64{}
	for i, k := range keys {
		want[k.ID] = answered[i].Load()
		if got, _ := h.e.KeyByHash(k.Hash); got.TotalRequests != want[k.ID] {
			t.Fatalf("key %d counts %d requests, %d were answered", i, got.TotalRequests, want[k.ID])
		}
	}
	h.flush()
	h.requireLogged(want)
	recs := h.j.Records(t)
	for _, c := range caps {
		requireEqual(t, fromImage(t, c.images, recs, c.from), h.e.State())
	}
}

// changeKey rotates the key, or revokes it when it is the fourth.
func (h *harness) changeKey(acct uuid.UUID, k core.Key) {
	var err error
	if k.Name == "k3" {
		_, err = h.e.RevokeKey(h.ctx, acct, k.ID)
	} else {
		_, err = h.e.RotateKey(h.ctx, acct, k.ID, [32]byte{0xF0, k.Hash[0]}, "svc_live_rotated1")
	}
	if err != nil {
		h.t.Errorf("change key %s: %v", k.Name, err)
	}
}

// TestCloseCountsEveryUseItAdmits: uses of a key racing Close are either
// counted in Close's last flush or refused with ErrClosed; none is counted
// after that flush (AuthenticateKey is admitted by the auth table's lock,
// not the engine's gate).
func TestCloseCountsEveryUseItAdmits(t *testing.T) {
	for round := range 20 {
		h := newHarness(t)
		alice := h.account("alice", core.RoleSpeculator, 0)
		k := h.newKey(alice, 1, 0)
		var admitted atomic.Uint64
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					if _, err := h.e.AuthenticateKey(k.Hash); err != nil {
						if !errors.Is(err, core.ErrClosed) {
							t.Error(err)
						}
						return
					}
					admitted.Add(1)
				}
			})
		}
		for admitted.Load() < 50 {
			runtime.Gosched()
		}
		h.e.Close()
		wg.Wait()
		recs := h.j.Records(t)
		last := recs[len(recs)-1]
		if last.Kind != core.KindKeyUsage || len(last.Keys) != 1 || last.Keys[0].Key.TotalRequests != admitted.Load() {
			t.Fatalf("round %d: last record after Close %+v, want the key's usage of %d", round, last, admitted.Load())
		}
	}
}
