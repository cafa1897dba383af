package core

import (
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Sizes of an arena's arrays: the first holds arenaFirstChunk objects,
// each next one twice as many as the one before, up to arenaMaxChunk, so
// that a small state (a test's, a new server's) does not pay for a large
// array. A ref names an object by its array and its place in it, the
// place in the low arenaChunkBits bits.
const (
	arenaFirstChunk = 8
	arenaChunkBits  = 10
	arenaMaxChunk   = 1 << arenaChunkBits
	// arenaMaxChunks is the number of arrays a ref can name.
	arenaMaxChunks = 1 << (32 - arenaChunkBits)
)

// arenaRef names one object of an arena: (array << arenaChunkBits) | place.
// It holds no pointer, so a table of refs is memory the garbage collector
// does not scan (idMap).
type arenaRef uint32

// arena allocates a state's accounts (and its markets) side by side in
// arrays that are never freed or moved, instead of one heap object each.
// The garbage collector's mark phase walks every live object: with a
// million accounts allocated one by one it visited them in the account
// map's order, a cache miss and an object lookup each, and took about a
// core-second per cycle (docs/PERFORMANCE.md, "A heap the collector marks
// quickly"); an array of accounts it scans front to back as one object,
// and so does a snapshot's capture (each). Objects are never deleted, so
// an array lives as long as the state.
//
// An object is named by its arenaRef, which at resolves without a lock,
// so that the map from IDs to objects holds refs rather than pointers: a
// million pointers into the arrays cost the collector's mark a third of
// its work over a state of 1,000,000 accounts (docs/PERFORMANCE.md, "The
// account map without pointers").
//
// An object whose creation fails after alloc keeps its slot unused, so
// every refusal a request can meet is checked before alloc (the name, the
// bonus's mint, a market's subsidy and the idempotency key's checks); what
// can still fail after it (the journal refusing the record) ends the
// engine.
//
// Refs have room for 2^32 objects, far more than memory holds (512 bytes
// an account); alloc panics past them rather than give a ref twice.
type arena[T any] struct {
	mu    sync.Mutex
	chunk []T // the array being filled: len used, cap its size; guarded by mu
	// dir holds every array, the one being filled last, each at its full
	// capacity, by index, for at. It is replaced by a longer one, under mu,
	// when an array is added, whose entries before the new one are the old
	// one's: a reader of the old one never reads past its length.
	dir atomic.Pointer[[][]T]
}

// alloc returns a new object, zero but for what init sets in it, given
// the object and its ref; init runs under the arena's lock, so that every
// walk sees what it sets. The object is not findable until the state
// stores its ref.
func (r *arena[T]) alloc(init func(*T, arenaRef)) *T {
	r.mu.Lock()
	defer r.mu.Unlock()
	var dir [][]T
	if d := r.dir.Load(); d != nil {
		dir = *d
	}
	if len(r.chunk) == cap(r.chunk) {
		// The last index is left unused: its last ref, plus one in
		// idMap's slots, would wrap to 0, a free slot.
		if len(dir) >= arenaMaxChunks-1 {
			panic("core: arena: more objects than refs can name")
		}
		n := arenaFirstChunk
		if cap(r.chunk) > 0 {
			n = min(2*cap(r.chunk), arenaMaxChunk)
		}
		r.chunk = prefaulted[T](n)
		dir = append(dir, r.chunk[:n])
		r.dir.Store(&dir)
	}
	i := len(r.chunk)
	r.chunk = r.chunk[:i+1]
	p := &r.chunk[i]
	init(p, arenaRef((len(dir)-1)<<arenaChunkBits|i))
	return p
}

// at returns the object ref names. ref must be one alloc returned.
func (r *arena[T]) at(ref arenaRef) *T {
	return &(*r.dir.Load())[ref>>arenaChunkBits][ref&(arenaMaxChunk-1)]
}

// prefaulted returns an empty array of room for n objects whose memory
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
func prefaulted[T any](n int) []T {
	c := make([]T, n)
	var zero T
	populate(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c))), uintptr(n)*unsafe.Sizeof(zero)))
	clear(c)
	return c[:0]
}

// each calls fn for every object allocated before it was called, in
// memory order, until fn returns false. It holds no lock while fn runs.
// Some of them may never have been stored in the state (for an account,
// stored says).
func (r *arena[T]) each(fn func(*T) bool) { r.eachPart(0, 1, fn) }

// eachPart is each over part of the arrays, those whose index is part
// modulo parts: parts goroutines, one for each part, see every object
// once between them, each in memory order.
func (r *arena[T]) eachPart(part, parts int, fn func(*T) bool) {
	r.mu.Lock()
	var chunks [][]T
	if d := r.dir.Load(); d != nil {
		chunks = slices.Clone(*d)
		chunks[len(chunks)-1] = r.chunk // as far as it is used
	}
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
