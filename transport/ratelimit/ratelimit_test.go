package ratelimit

import (
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

const testWindow = 60 * time.Second

// t0 has a fraction of a second so that tests see ResetUnix round up.
var t0 = time.Unix(1_700_000_000, 250_000_000)

func keyN(kind Kind, n int) Key {
	k := Key{Kind: kind}
	k.ID[0], k.ID[1], k.ID[2] = byte(n), byte(n>>8), byte(n>>16)
	return k
}

func TestAllowWindow(t *testing.T) {
	a, b := keyN(KindAPIKey, 1), keyN(KindAPIKey, 2)
	aAccount := keyN(KindAccount, 1) // same ID as a, other kind
	type step struct {
		key        Key
		at         time.Duration // after t0
		allowed    bool
		remaining  int
		reset      time.Duration // after t0
		retryAfter time.Duration
	}
	tests := []struct {
		name  string
		limit int
		steps []step
	}{
		{"first request opens the window", 3, []step{
			{a, 10 * time.Second, true, 2, 70 * time.Second, 0},
			{a, 11 * time.Second, true, 1, 70 * time.Second, 0},
		}},
		{"limit reached is refused until the end", 3, []step{
			{a, 0, true, 2, 60 * time.Second, 0},
			{a, time.Second, true, 1, 60 * time.Second, 0},
			{a, 2 * time.Second, true, 0, 60 * time.Second, 0},
			{a, 30 * time.Second, false, 0, 60 * time.Second, 30 * time.Second},
			{a, 60*time.Second - time.Nanosecond, false, 0, 60 * time.Second, time.Nanosecond},
		}},
		{"refused requests neither count nor extend the window", 2, []step{
			{a, 0, true, 1, 60 * time.Second, 0},
			{a, 0, true, 0, 60 * time.Second, 0},
			{a, 0, false, 0, 60 * time.Second, 60 * time.Second},
			{a, 40 * time.Second, false, 0, 60 * time.Second, 20 * time.Second},
			{a, 59 * time.Second, false, 0, 60 * time.Second, time.Second},
			{a, 60 * time.Second, true, 1, 120 * time.Second, 0},
			{a, 61 * time.Second, true, 0, 120 * time.Second, 0},
		}},
		{"new window opens at the first request after the end", 1, []step{
			{a, 0, true, 0, 60 * time.Second, 0},
			{a, 90 * time.Second, true, 0, 150 * time.Second, 0},
			{a, 149 * time.Second, false, 0, 150 * time.Second, time.Second},
			{a, 150 * time.Second, true, 0, 210 * time.Second, 0},
		}},
		{"keys and kinds are independent", 1, []step{
			{a, 0, true, 0, 60 * time.Second, 0},
			{b, time.Second, true, 0, 61 * time.Second, 0},
			{aAccount, 2 * time.Second, true, 0, 62 * time.Second, 0},
			{a, 3 * time.Second, false, 0, 60 * time.Second, 57 * time.Second},
			{b, 3 * time.Second, false, 0, 61 * time.Second, 58 * time.Second},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New(testWindow)
			for i, s := range tt.steps {
				got := l.Allow(s.key, tt.limit, t0.Add(s.at))
				want := Decision{
					Allowed:    s.allowed,
					Limit:      tt.limit,
					Remaining:  s.remaining,
					Reset:      t0.Add(s.reset),
					RetryAfter: s.retryAfter,
				}
				if got != want {
					t.Fatalf("step %d: Allow(%v, %d, t0+%v) = %+v, want %+v", i, s.key, tt.limit, s.at, got, want)
				}
			}
		})
	}
}

func TestDecisionHeaders(t *testing.T) {
	tests := []struct {
		name            string
		reset           time.Time
		retryAfter      time.Duration
		wantResetUnix   int64
		wantRetrySecond int
	}{
		{"whole second", time.Unix(100, 0), 2 * time.Second, 100, 2},
		{"a nanosecond past rounds up", time.Unix(100, 1), 2*time.Second + time.Nanosecond, 101, 3},
		{"just under a second", time.Unix(100, 999_999_999), 999 * time.Millisecond, 101, 1},
		{"no wait is still 1", time.Unix(100, 0), 0, 100, 1},
		{"a nanosecond is 1", time.Unix(100, 0), time.Nanosecond, 100, 1},
		{"whole window", time.Unix(160, 0), 60 * time.Second, 160, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decision{Reset: tt.reset, RetryAfter: tt.retryAfter}
			if got := d.ResetUnix(); got != tt.wantResetUnix {
				t.Errorf("ResetUnix() with Reset %v = %d, want %d", tt.reset, got, tt.wantResetUnix)
			}
			if got := d.RetryAfterSeconds(); got != tt.wantRetrySecond {
				t.Errorf("RetryAfterSeconds() with RetryAfter %v = %d, want %d", tt.retryAfter, got, tt.wantRetrySecond)
			}
		})
	}
}

// TestAllowOneKeyConcurrent sends 10 times the limit from 64 goroutines at
// one key: exactly the limit pass, each Remaining value once.
func TestAllowOneKeyConcurrent(t *testing.T) {
	const (
		goroutines = 64
		limit      = 160
		perG       = 10 * limit / goroutines
	)
	l := New(testWindow)
	k := keyN(KindIP, 7)
	var remainingSeen [limit]atomic.Int32
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range perG {
				if d := l.Allow(k, limit, t0); d.Allowed {
					allowed.Add(1)
					remainingSeen[d.Remaining].Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != limit {
		t.Fatalf("%d requests from %d goroutines, limit %d: %d allowed", goroutines*perG, goroutines, limit, got)
	}
	for r := range remainingSeen {
		if n := remainingSeen[r].Load(); n != 1 {
			t.Errorf("Remaining %d seen %d times, want once", r, n)
		}
	}
}

// TestAllowManyKeysConcurrent has goroutines share many keys, each asked
// for more than its limit: every key gets exactly its limit.
func TestAllowManyKeysConcurrent(t *testing.T) {
	const (
		goroutines = 16
		keys       = 2000
		rounds     = 3 // per goroutine and key
	)
	limitOf := func(i int) int { return 1 + i%7 }
	l := New(testWindow)
	allowed := make([]atomic.Int32, keys)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for r := range rounds {
				for j := range keys {
					i := (j + g*131 + r*17) % keys // goroutines meet on keys in different orders
					if l.Allow(keyN(KindAccount, i), limitOf(i), t0).Allowed {
						allowed[i].Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	for i := range allowed {
		if got, want := int(allowed[i].Load()), limitOf(i); got != want {
			t.Errorf("key %d: %d of %d requests allowed, want limit %d", i, got, goroutines*rounds, want)
		}
	}
	if got := l.Len(); got != keys {
		t.Errorf("Len() = %d, want %d", got, keys)
	}
}

func TestSweep(t *testing.T) {
	l := New(testWindow)
	// Key i opens its window at t0 + i seconds and uses its one request.
	const keys = 100
	for i := range keys {
		l.Allow(keyN(KindIP, i), 1, t0.Add(time.Duration(i)*time.Second))
	}
	tests := []struct {
		name        string
		at          time.Duration // after t0
		wantDropped int
		wantLen     int
	}{
		{"nothing has ended", 59 * time.Second, 0, keys},
		{"windows end at their end", 60 * time.Second, 1, keys - 1},
		{"idempotent", 60 * time.Second, 0, keys - 1},
		{"more end", 100 * time.Second, 40, keys - 41},
		{"all end", 1000 * time.Second, keys - 41, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := l.Sweep(t0.Add(tt.at)); got != tt.wantDropped {
				t.Errorf("Sweep(t0+%v) = %d, want %d", tt.at, got, tt.wantDropped)
			}
			if got := l.Len(); got != tt.wantLen {
				t.Errorf("Len() after Sweep(t0+%v) = %d, want %d", tt.at, got, tt.wantLen)
			}
		})
	}
}

// TestSweepKeepsCounts checks that windows still open survive a Sweep with
// their counts, and that a swept key starts afresh.
func TestSweepKeepsCounts(t *testing.T) {
	l := New(testWindow)
	old, live := keyN(KindIP, 1), keyN(KindIP, 2)
	l.Allow(old, 1, t0)
	l.Allow(live, 1, t0.Add(30*time.Second))
	if got := l.Sweep(t0.Add(60 * time.Second)); got != 1 {
		t.Fatalf("Sweep = %d, want 1", got)
	}
	if d := l.Allow(live, 1, t0.Add(61*time.Second)); d.Allowed {
		t.Errorf("live key after Sweep: %+v, want refused (its window holds)", d)
	}
	if d := l.Allow(old, 1, t0.Add(61*time.Second)); !d.Allowed || !d.Reset.Equal(t0.Add(121*time.Second)) {
		t.Errorf("swept key: %+v, want allowed in a window ending at t0+121s", d)
	}
}

// TestSweepRemakesEmptiedMaps checks that a shard's map is remade once a
// Sweep leaves it at a quarter of its peak, since Go maps never shrink.
func TestSweepRemakesEmptiedMaps(t *testing.T) {
	l := New(testWindow)
	for i := range 10_000 {
		l.Allow(keyN(KindIP, i), 1, t0)
	}
	l.Allow(keyN(KindIP, 1<<20), 1, t0.Add(30*time.Second))
	l.Sweep(t0.Add(60 * time.Second))
	for i := range l.shards {
		s := &l.shards[i]
		if s.peak != len(s.windows) {
			t.Errorf("shard %d: peak %d after Sweep left %d windows, want the map remade", i, s.peak, len(s.windows))
		}
	}
}

// TestFull fills a Limiter of one window per shard: a new key in a full
// shard is refused with Full until the earliest window there ends.
func TestFull(t *testing.T) {
	l := NewSize(testWindow, 1)
	a := keyN(KindIP, 0)
	b := keyN(KindIP, 1)
	for i := 2; l.shard(b) != l.shard(a); i++ {
		b = keyN(KindIP, i)
	}
	if d := l.Allow(a, 5, t0); !d.Allowed {
		t.Fatalf("first key: %+v, want allowed", d)
	}
	tests := []struct {
		name string
		key  Key
		at   time.Duration
		want Decision
	}{
		{"new key in a full shard", b, 10 * time.Second,
			Decision{Full: true, Limit: 5, Reset: t0.Add(60 * time.Second), RetryAfter: 50 * time.Second}},
		{"still full, without a scan", b, 59 * time.Second,
			Decision{Full: true, Limit: 5, Reset: t0.Add(60 * time.Second), RetryAfter: time.Second}},
		{"the key with a window is served", a, 59 * time.Second,
			Decision{Allowed: true, Limit: 5, Remaining: 3, Reset: t0.Add(60 * time.Second)}},
		{"room once the window ends", b, 60 * time.Second,
			Decision{Allowed: true, Limit: 5, Remaining: 4, Reset: t0.Add(120 * time.Second)}},
		{"the ended window was dropped for it", a, 61 * time.Second,
			Decision{Full: true, Limit: 5, Reset: t0.Add(120 * time.Second), RetryAfter: 59 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := l.Allow(tt.key, 5, t0.Add(tt.at)); got != tt.want {
				t.Errorf("Allow(t0+%v) = %+v, want %+v", tt.at, got, tt.want)
			}
		})
	}
}

func TestIPKey(t *testing.T) {
	tests := []struct {
		name     string
		a, b     string
		wantSame bool
	}{
		{"IPv4 equals its mapped form", "192.0.2.1", "::ffff:192.0.2.1", true},
		{"IPv4 addresses are apart", "192.0.2.1", "192.0.2.2", false},
		{"IPv6 in one /64 share", "2001:db8:1:2::1", "2001:db8:1:2:ffff::9", true},
		{"IPv6 in two /64s are apart", "2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"zone ignored", "fe80::1%eth0", "fe80::2", true},
		{"IPv4 apart from IPv6", "192.0.2.1", "::c000:201", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ka, kb := IPKey(netip.MustParseAddr(tt.a)), IPKey(netip.MustParseAddr(tt.b))
			if ka.Kind != KindIP {
				t.Errorf("IPKey(%s).Kind = %d, want KindIP", tt.a, ka.Kind)
			}
			if got := ka == kb; got != tt.wantSame {
				t.Errorf("IPKey(%s) == IPKey(%s) is %v, want %v (%x, %x)", tt.a, tt.b, got, tt.wantSame, ka.ID, kb.ID)
			}
		})
	}
}

func TestAllowDoesNotAllocate(t *testing.T) {
	l := New(testWindow)
	k := keyN(KindAPIKey, 3)
	l.Allow(k, 1_000_000, t0)
	if n := testing.AllocsPerRun(1000, func() { l.Allow(k, 1_000_000, t0) }); n != 0 {
		t.Errorf("Allow on an existing window: %v allocations, want 0", n)
	}
}

func TestShardPadding(t *testing.T) {
	if size := unsafe.Sizeof(shard{}); size%cacheLineBytes != 0 {
		t.Errorf("shard is %d bytes, want a multiple of %d", size, cacheLineBytes)
	}
}

func TestBadLimitPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("Allow with limit 0 did not panic")
		}
	}()
	New(testWindow).Allow(Key{}, 0, t0)
}

func BenchmarkAllow(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		// One goroutine, for the cost without contention.
		l := New(testWindow)
		k := keyN(KindAPIKey, 1)
		b.ReportAllocs()
		for b.Loop() {
			l.Allow(k, 1<<62, t0)
		}
	})
	for _, keys := range []int{1, 10_000} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			l := New(testWindow)
			ks := make([]Key, keys)
			for i := range ks {
				ks[i] = keyN(KindAPIKey, i)
				l.Allow(ks[i], 1<<62, t0)
			}
			var next atomic.Uint64 // gives each goroutine its own start
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(7919))
				for pb.Next() {
					i++
					if !l.Allow(ks[i%keys], 1<<62, t0).Allowed {
						b.Error("refused")
						return
					}
				}
			})
		})
	}
}
