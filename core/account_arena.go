package core

import (
	"sync"

	"github.com/google/uuid"
)

// Sizes of an accountArena's arrays: the first holds arenaFirstChunk
// accounts, each next one twice as many as the one before, up to
// arenaMaxChunk (about 560 KB of accounts), so that a small state (a test's,
// a new server's) does not pay for a large array.
const (
	arenaFirstChunk = 8
	arenaMaxChunk   = 1024
)

// accountArena allocates a state's accounts side by side in arrays that are
// never freed or moved, instead of one heap object each. The garbage
// collector's mark phase walks every live object: with a million accounts
// allocated one by one it visited them in the account map's order, a cache
// miss and an object lookup each, and took about a core-second per cycle
// (docs/PERFORMANCE.md, "A heap the collector marks quickly"); an array of
// accounts it scans front to back as one object. Accounts are never
// deleted, so an array lives as long as the state.
type accountArena struct {
	mu    sync.Mutex
	chunk []account  // the array being filled: len used, cap its size
	free  []*account // slots handed back by release, never published
}

// alloc returns a new, empty account with ID id. It is not findable until
// the state stores it; an account that will never be stored goes back
// through release.
func (r *accountArena) alloc(id uuid.UUID) *account {
	r.mu.Lock()
	defer r.mu.Unlock()
	var a *account
	switch {
	case len(r.free) > 0:
		a = r.free[len(r.free)-1]
		r.free = r.free[:len(r.free)-1]
	default:
		if len(r.chunk) == cap(r.chunk) {
			n := arenaFirstChunk
			if cap(r.chunk) > 0 {
				n = min(2*cap(r.chunk), arenaMaxChunk)
			}
			r.chunk = make([]account, 0, n)
		}
		r.chunk = r.chunk[:len(r.chunk)+1]
		a = &r.chunk[len(r.chunk)-1]
	}
	a.id = id
	return a
}

// release takes back an account alloc returned that was never stored in
// the state (its creation failed), for the next alloc. The caller holds no
// lock of a and keeps no reference to it.
func (r *accountArena) release(a *account) {
	*a = account{}
	r.mu.Lock()
	r.free = append(r.free, a)
	r.mu.Unlock()
}
