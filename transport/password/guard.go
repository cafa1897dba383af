package password

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"marketd/internal/sweep"
)

// DefaultMaxNames is the number of names a Guard made by NewGuard tracks at
// most. Every failure costs a bcrypt run, so the Hasher bounds how fast
// names are added: 2 workers at cost 10 (85 ms a hash, BenchmarkHash on the
// 2-core development machine) fail at most about 24 logins a second, under
// 1,500 names per 1-minute block. 65,536 is far beyond that, and about
// 10 MiB at most.
const DefaultMaxNames = 1 << 16

// maxNameBytes bounds the part of a name the Guard keeps, so that its memory
// does not depend on callers validating names first. Account names are at
// most 32 bytes; a longer name belongs to no account, and tracking it by its
// prefix changes nothing.
const maxNameBytes = 64

// Guard counts failed logins per account name and refuses a name that
// failed too often. Names are compared ignoring case, as account names are
// unique ignoring case. It is safe for concurrent use: one mutex guards all
// names, since each call comes with a bcrypt run that costs thousands of
// times the critical section.
type Guard struct {
	maxFailures int
	block       time.Duration
	maxNames    int

	mu sync.Mutex
	// names holds, by folded name, the failures of names that failed
	// within the last block period or are blocked; guarded by mu.
	names map[string]failures
	// peak is the largest len(names) since the map was made, guarded by mu:
	// Sweep remakes the map when it falls to a quarter, since Go maps never
	// shrink.
	peak int
	// fullUntilNanos is, while the map is full, the earliest time one of
	// its entries expires, guarded by mu: until then new names are refused
	// without another scan.
	fullUntilNanos int64
}

// failures is the record of one name.
type failures struct {
	startNanos        int64 // the first failure of the counting window
	count             int   // failures since startNanos
	blockedUntilNanos int64 // the name is refused before this; 0 if never blocked
}

// expiryNanos returns when f has no effect left: its window and any block
// have ended.
func (f failures) expiryNanos(block time.Duration) int64 {
	return max(f.startNanos+int64(block), f.blockedUntilNanos)
}

// NewGuard returns a Guard that blocks a name after maxFailures failures
// within block, for block after the last failure (production: 5 failures,
// 1 minute), and tracks at most DefaultMaxNames names.
func NewGuard(maxFailures int, block time.Duration) *Guard {
	return NewGuardSize(maxFailures, block, DefaultMaxNames)
}

// NewGuardSize is NewGuard tracking at most maxNames names. When the Guard
// is full, Check refuses names it does not track, since it could not count
// their failures: refusing some logins for a while is safer than letting a
// flood of names lift the guard from the one under attack.
func NewGuardSize(maxFailures int, block time.Duration, maxNames int) *Guard {
	if maxFailures < 1 || block <= 0 || maxNames < 1 {
		panic(fmt.Sprintf("BUG: password: NewGuard(maxFailures %d, block %v, maxNames %d)", maxFailures, block, maxNames))
	}
	return &Guard{
		maxFailures: maxFailures,
		block:       block,
		maxNames:    maxNames,
		names:       make(map[string]failures),
	}
}

// foldName returns the map key of a name: lower case, at most maxNameBytes.
// Account names are ASCII; strings.ToLower allocates only if name has upper
// case letters.
func foldName(name string) string {
	return strings.ToLower(name[:min(len(name), maxNameBytes)])
}

// Check reports whether name is blocked at now, and if so for how long.
// It is called before the password is hashed, so a blocked name costs no
// bcrypt run.
func (g *Guard) Check(name string, now time.Time) (retryAfter time.Duration, blocked bool) {
	return g.check(foldName(name), now)
}

// check is Check of a key already folded.
func (g *Guard) check(key string, now time.Time) (retryAfter time.Duration, blocked bool) {
	retryAfter, blocked, full := g.checkRoom(key, now)
	return retryAfter, blocked || full
}

// checkRoom is check telling a key blocked by its own failures (blocked)
// from an untracked key the Guard has no room to count (full), for a
// caller that must not refuse the latter (Lockout's device cookies).
func (g *Guard) checkRoom(key string, now time.Time) (retryAfter time.Duration, blocked, full bool) {
	nowNanos := now.UnixNano()
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.names[key]; ok {
		if nowNanos < f.blockedUntilNanos {
			return time.Duration(f.blockedUntilNanos - nowNanos), true, false
		}
		return 0, false, false
	}
	if len(g.names) >= g.maxNames {
		if retryNanos, full := g.makeRoom(nowNanos); full {
			return time.Duration(retryNanos), false, true
		}
	}
	return 0, false, false
}

// Fail records a failed login of name at now. The failure that brings the
// count within the window to maxFailures blocks the name for block; a
// failure while blocked (a login that passed Check before the block began)
// extends the block.
func (g *Guard) Fail(name string, now time.Time) {
	g.fail(foldName(name), now)
}

// fail is Fail of a key already folded. It reports whether the failure
// was counted: false when the key was untracked and the Guard full.
func (g *Guard) fail(key string, now time.Time) (counted bool) {
	nowNanos := now.UnixNano()
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.names[key]
	switch {
	case !ok:
		if len(g.names) >= g.maxNames {
			if _, full := g.makeRoom(nowNanos); full {
				return false // Check refuses untracked names while the Guard is full
			}
		}
		// Clone: name may be a slice of a larger string, such as a request
		// body, which the map would otherwise keep alive.
		key = strings.Clone(key)
		f = failures{startNanos: nowNanos, count: 1}
	case nowNanos >= f.expiryNanos(g.block):
		f = failures{startNanos: nowNanos, count: 1}
	default:
		f.count++
	}
	if f.count >= g.maxFailures {
		f.blockedUntilNanos = nowNanos + int64(g.block)
	}
	g.names[key] = f
	g.peak = max(g.peak, len(g.names))
	return true
}

// Succeed forgets the failures of name, after a successful login.
func (g *Guard) Succeed(name string) {
	g.succeed(foldName(name))
}

// succeed is Succeed of a key already folded.
func (g *Guard) succeed(key string) {
	g.mu.Lock()
	delete(g.names, key)
	g.mu.Unlock()
}

// makeRoom drops expired entries and reports whether the Guard is still
// full, and if so how many nanoseconds until an entry expires. g.mu must be
// held.
func (g *Guard) makeRoom(nowNanos int64) (retryNanos int64, full bool) {
	if nowNanos < g.fullUntilNanos {
		return g.fullUntilNanos - nowNanos, true
	}
	earliest := int64(0)
	for key, f := range g.names {
		switch exp := f.expiryNanos(g.block); {
		case exp <= nowNanos:
			delete(g.names, key)
		case earliest == 0 || exp < earliest:
			earliest = exp
		}
	}
	if len(g.names) < g.maxNames {
		return 0, false
	}
	g.fullUntilNanos = earliest
	return earliest - nowNanos, true
}

// Sweep drops the names whose window and block have ended by now and
// returns how many. The server calls it periodically (every block period or
// so) so that memory follows the names under attack.
func (g *Guard) Sweep(now time.Time) int {
	nowNanos := now.UnixNano()
	g.mu.Lock()
	defer g.mu.Unlock()
	var dropped int
	g.names, g.peak, dropped = sweep.Expired(g.names, g.peak, func(f failures) bool { return f.expiryNanos(g.block) <= nowNanos })
	return dropped
}

// Len returns the number of names tracked, for a gauge.
func (g *Guard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.names)
}
