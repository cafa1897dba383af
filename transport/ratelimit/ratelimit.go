package ratelimit

import (
	"fmt"
	"hash/maphash"
	"net/netip"
	"sync"
	"time"
	"unsafe"

	"marketd/internal/sweep"
)

// DefaultMaxKeys is the number of windows a Limiter made by New holds at
// most: far more clients than the service expects in one window, yet only
// about 24 MiB, at the 96 bytes per window measured with the map's overhead
// at a million windows.
const DefaultMaxKeys = 1 << 18

// numShards is the number of shards: enough that 2-core machines' request
// goroutines rarely meet on one mutex, few enough for Sweep to range over.
// A power of two, so a shard is picked with a mask.
const numShards = 64

// cacheLineBytes is the cache line size of amd64 and most arm64 cores.
const cacheLineBytes = 64

// Kind says what a Key identifies.
type Kind uint8

// The kinds of limited clients. Each has its own key space, so an API key
// and an account with equal IDs never share a window.
const (
	KindAPIKey  Kind = iota + 1 // ID is the API key's ID
	KindAccount                 // ID is the session's account ID
	KindIP                      // ID is the client address, as IPKey makes it
	KindDevice                  // ID is a device cookie's device ID
)

// Key identifies a limited client. It is a comparable value of 17 bytes
// without pointers, so map operations on it do not allocate and the
// garbage collector does not scan the maps that hold it.
type Key struct {
	Kind Kind
	ID   [16]byte
}

// IPKey returns the key of a client address. An IPv4 address (mapped or
// not) is limited alone; an IPv6 address by its /64 prefix, because one
// host usually holds a whole /64 and could otherwise take a fresh address,
// and a fresh window, for every request.
func IPKey(addr netip.Addr) Key {
	addr = addr.Unmap()
	id := addr.As16()
	if addr.Is6() {
		clear(id[8:])
	}
	return Key{Kind: KindIP, ID: id}
}

// Decision is the answer to one request.
type Decision struct {
	// Allowed reports whether the request may proceed. It was counted if so.
	Allowed bool
	// Full reports a refusal because the Limiter holds its maximum number
	// of windows and this key has none; the caller answers 503 rather than
	// 429, since the client did nothing wrong. Allowed is false.
	Full bool
	// Limit is the number of requests allowed per window.
	Limit int
	// Remaining is the number of requests the window still allows after
	// this one.
	Remaining int
	// Reset is when the window ends.
	Reset time.Time
	// RetryAfter is how long a refused client should wait: until the
	// window ends, or until a window ends somewhere in a full Limiter.
	// Zero when Allowed.
	RetryAfter time.Duration
}

// ResetUnix returns Reset in whole Unix seconds for X-RateLimit-Reset,
// rounded up: a client that waits until the second it names finds the
// window ended.
func (d Decision) ResetUnix() int64 {
	s := d.Reset.Unix()
	if d.Reset.Nanosecond() > 0 {
		s++
	}
	return s
}

// RetryAfterSeconds returns RetryAfter in whole seconds for Retry-After,
// rounded up and at least 1: a client that waits that long finds the window
// ended, and 0 would invite an immediate retry.
func (d Decision) RetryAfterSeconds() int {
	s := int((d.RetryAfter + time.Second - 1) / time.Second)
	return max(s, 1)
}

// windowState is one key's current window. Times are Unix nanoseconds rather
// than time.Time, whose *Location pointer would make the garbage collector
// scan every map entry; the wall clock is what Reset reports anyway.
type windowState struct {
	endNanos int64 // the window covers [endNanos-window, endNanos)
	count    int   // allowed requests in the window
}

// shard is one lock's share of the windows, padded to whole cache lines so
// that two cores locking neighbouring shards do not bounce one line between
// them.
type shard struct {
	shardState
	_ [cacheLineBytes - unsafe.Sizeof(shardState{})%cacheLineBytes]byte
}

// shardState is the content of a shard.
type shardState struct {
	mu      sync.Mutex
	windows map[Key]windowState // guarded by mu
	// peak is the largest len(windows) since the map was made, guarded by
	// mu. Go maps never shrink, so Sweep remakes a map that has emptied to
	// a quarter of its peak; otherwise one burst of clients would hold its
	// memory for good.
	peak int
	// fullUntilNanos is, while the shard is full, the end of its earliest
	// window, guarded by mu: until then no window can be dropped, so new
	// keys are refused without scanning the shard again.
	fullUntilNanos int64
}

// Limiter counts requests per key in fixed windows. It is safe for
// concurrent use. Its zero value is not usable: make one with New.
type Limiter struct {
	window          time.Duration
	maxKeysPerShard int
	seed            maphash.Seed // spreads keys over shards; a client cannot aim at one shard
	shards          [numShards]shard
}

// New returns a Limiter with windows of the given length that holds at most
// DefaultMaxKeys windows.
func New(window time.Duration) *Limiter {
	return NewSize(window, DefaultMaxKeys)
}

// NewSize returns a Limiter with windows of the given length that holds
// about maxKeys windows at most. The bound is kept per shard, so a shard can
// fill up slightly before the Limiter as a whole does.
func NewSize(window time.Duration, maxKeys int) *Limiter {
	if window <= 0 || maxKeys < 1 {
		panic(fmt.Sprintf("BUG: ratelimit: window %v, maxKeys %d", window, maxKeys))
	}
	l := &Limiter{
		window:          window,
		maxKeysPerShard: (maxKeys + numShards - 1) / numShards,
		seed:            maphash.MakeSeed(),
	}
	for i := range l.shards {
		l.shards[i].windows = make(map[Key]windowState)
	}
	return l
}

func (l *Limiter) shard(k Key) *shard {
	return &l.shards[maphash.Comparable(l.seed, k)&(numShards-1)]
}

// Allow counts a request of k at now against limit requests per window
// and reports whether it may proceed. A refused request is not counted.
// The limit is passed on each call because it belongs to the route; limit
// must be at least 1.
func (l *Limiter) Allow(k Key, limit int, now time.Time) Decision {
	return l.AllowN(k, limit, 1, now)
}

// AllowN is Allow for a request that counts as n (a batch of n items): it
// proceeds only when the window has room for all n, and then counts n.
func (l *Limiter) AllowN(k Key, limit, n int, now time.Time) Decision {
	if limit < 1 || n < 1 {
		panic(fmt.Sprintf("BUG: ratelimit: limit %d, cost %d for kind %d", limit, n, k.Kind))
	}
	nowNanos := now.UnixNano()
	s := l.shard(k)
	s.mu.Lock()
	w, ok := s.windows[k]
	if !ok || nowNanos >= w.endNanos {
		if !ok && len(s.windows) >= l.maxKeysPerShard {
			if retry, full := s.makeRoom(nowNanos, l.maxKeysPerShard); full {
				s.mu.Unlock()
				return Decision{Full: true, Limit: limit, Reset: time.Unix(0, nowNanos+retry), RetryAfter: time.Duration(retry)}
			}
		}
		w = windowState{endNanos: nowNanos + int64(l.window)}
	}
	if w.count+n > limit {
		s.mu.Unlock()
		return Decision{Limit: limit, Reset: time.Unix(0, w.endNanos), RetryAfter: time.Duration(w.endNanos - nowNanos)}
	}
	w.count += n
	s.windows[k] = w
	s.peak = max(s.peak, len(s.windows))
	s.mu.Unlock()
	return Decision{Allowed: true, Limit: limit, Remaining: limit - w.count, Reset: time.Unix(0, w.endNanos)}
}

// makeRoom drops the shard's ended windows and reports whether it is still
// full, and if so how many nanoseconds until its earliest window ends.
// Caller holds s.mu.
func (s *shard) makeRoom(nowNanos int64, maxKeys int) (retryNanos int64, full bool) {
	if nowNanos < s.fullUntilNanos {
		return s.fullUntilNanos - nowNanos, true
	}
	earliest := int64(0)
	for k, w := range s.windows {
		switch {
		case w.endNanos <= nowNanos:
			delete(s.windows, k)
		case earliest == 0 || w.endNanos < earliest:
			earliest = w.endNanos
		}
	}
	if len(s.windows) < maxKeys {
		return 0, false
	}
	s.fullUntilNanos = earliest
	return earliest - nowNanos, true
}

// Move gives to the window of from, if from has one that has not ended
// by now, and drops from's: a rotated API key keeps the window of the key
// it replaces, so that fresh keys cannot multiply the per-key limit
// (docs/API.md, "Rate limits"). to's shard takes the window even when
// full, since one fewer is held elsewhere; moves are bounded by what
// causes them (key rotations are limited per account).
func (l *Limiter) Move(from, to Key, now time.Time) {
	nowNanos := now.UnixNano()
	s := l.shard(from)
	s.mu.Lock()
	w, ok := s.windows[from]
	delete(s.windows, from)
	s.mu.Unlock()
	if !ok || nowNanos >= w.endNanos {
		return
	}
	s = l.shard(to)
	s.mu.Lock()
	s.windows[to] = w
	s.peak = max(s.peak, len(s.windows))
	s.mu.Unlock()
}

// Sweep drops the windows that have ended by now and returns how many. The
// server calls it periodically (every window or so) so that memory follows
// the active clients. It locks one shard at a time.
func (l *Limiter) Sweep(now time.Time) int {
	nowNanos := now.UnixNano()
	dropped := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		var n int
		s.windows, s.peak, n = sweep.Expired(s.windows, s.peak, func(w windowState) bool { return w.endNanos <= nowNanos })
		dropped += n
		s.mu.Unlock()
	}
	return dropped
}

// Len returns the number of windows held, ended or not, for a gauge.
func (l *Limiter) Len() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.windows)
		s.mu.Unlock()
	}
	return n
}
