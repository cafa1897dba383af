package core

import (
	"sync"
	"unsafe"

	"github.com/google/uuid"
)

// Sizes of an accountArena's arrays: the first holds arenaFirstChunk
// accounts, each next one twice as many as the one before, up to
// arenaMaxChunk (512 KiB of accounts), so that a small state (a test's,
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
// accounts it scans front to back as one object, and so does a snapshot's
// capture (each). Accounts are never deleted, so an array lives as long as
// the state.
//
// An account whose creation fails after alloc (the journal refused its
// record) keeps its slot unused: such failures end the engine, or are
// refusals of a bonus too large to mint, an administrator's error.
type accountArena struct {
	mu     sync.Mutex
	chunks [][]account // the full arrays, oldest first
	chunk  []account   // the array being filled: len used, cap its size
}

// alloc returns a new, empty account with ID id. It is not findable until
// the state stores it.
func (r *accountArena) alloc(id uuid.UUID) *account {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.chunk) == cap(r.chunk) {
		n := arenaFirstChunk
		if cap(r.chunk) > 0 {
			r.chunks = append(r.chunks, r.chunk)
			n = min(2*cap(r.chunk), arenaMaxChunk)
		}
		r.chunk = prefaulted(n)
	}
	r.chunk = r.chunk[:len(r.chunk)+1]
	a := &r.chunk[len(r.chunk)-1]
	a.id = id // under mu: each sees it
	return a
}

// prefaulted returns an empty array of room for n accounts whose memory
// has been written once. The runtime takes a large array fresh from the
// kernel and writes nothing into it; an account's first access is often a
// read (a ledger's length, a balance), which maps the kernel's shared zero
// page, and the first write then faults again to copy it, flushing the
// TLB of every processor the process runs on. On this 2-vCPU guest those
// flushes (inter-processor interrupts) made time to ready with 1,000,000
// accounts 4.2 s instead of 2.6 (docs/PERFORMANCE.md, "Recovery on both
// cores"). Written first, each page is faulted in once, with no flush.
// The kernel maps its pages first, all in one call (populate), rather
// than one page fault at each 4 KiB the clear writes: 1,000,000 accounts
// are 125,000 pages, and their faults were 0.2-1.3 s of a snapshot's load
// (docs/PERFORMANCE.md, "The accounts' pages mapped in one call").
func prefaulted(n int) []account {
	c := make([]account, n)
	populate(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c))), uintptr(n)*unsafe.Sizeof(account{})))
	clear(c)
	return c[:0]
}

// each calls fn for every account allocated before it was called, in
// memory order, until fn returns false. It holds no lock while fn runs.
// Some of them may never have been stored in the state (stored says).
func (r *accountArena) each(fn func(*account) bool) { r.eachPart(0, 1, fn) }

// eachPart is each over part of the arrays, those whose index is part
// modulo parts: parts goroutines, one for each part, see every account
// once between them, each in memory order.
func (r *accountArena) eachPart(part, parts int, fn func(*account) bool) {
	r.mu.Lock()
	chunks := append(r.chunks[:len(r.chunks):len(r.chunks)], r.chunk)
	r.mu.Unlock()
	for j := part; j < len(chunks); j += parts {
		c := chunks[j]
		for i := range c {
			if !fn(&c[i]) {
				return
			}
		}
	}
}

// stored reports whether a is one of the state's accounts: every account
// but the house, which the state starts with, was stored by the change
// that created it, which set its LSN under its lock. Caller holds a.mu.
func (a *account) stored() bool { return a.lsn != 0 || a.id == HouseID }
