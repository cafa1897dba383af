package core

import (
	"fmt"
	"reflect"
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
// quickly"); an array of accounts it scans as one object, up to its
// last companion's last pointer word (below), and a snapshot's capture
// walks it front to back (each). Objects are never deleted, so
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
// Refs have room for 2^32 objects, far more than memory holds (384 bytes
// an account with its companion); alloc panics past them rather than give
// a ref twice.
//
// Each object has a companion of type P, in the same array's allocation:
// the array holds its companions first, then its objects. An account
// keeps every pointer it has in its companion (accountRefs) and none in
// itself, so the collector's mark reads only the companions, half of the
// array's memory with the 9 pointer words of each in its first 160 bytes,
// and stops at the last of them, where the objects begin: the mark over a
// million accounts whose 18 pointer words were spread over 512 bytes each
// read them all, nil or not, on every cycle (docs/PERFORMANCE.md, "Accounts
// the collector does not scan"). An object finds its companion from its
// ref alone (companion), with no pointer of its own that the mark would
// read. A market has none (P is struct{}).
type arena[T, P any] struct {
	mu   sync.Mutex
	used int // objects allocated in the last array; guarded by mu
	// dir holds every array, the one being filled last, by index, for at.
	// It is replaced by a longer one, under mu, when an array is added,
	// whose entries before the new one are the old one's: a reader of the
	// old one never reads past its length.
	dir atomic.Pointer[[]arenaChunk]
}

// arenaChunk is one of an arena's arrays: n companions, then n objects,
// in one allocation.
type arenaChunk struct {
	objs unsafe.Pointer // the first object; it keeps the allocation alive
	n    int
}

// arenaChunkLen returns the number of objects of array j: arenaFirstChunk
// for the first, twice the one before's for each next, up to
// arenaMaxChunk. companion derives it from a ref.
func arenaChunkLen(j int) int {
	if j >= arenaDoublings {
		return arenaMaxChunk
	}
	return arenaFirstChunk << j
}

// arenaDoublings is the number of arrays smaller than arenaMaxChunk.
const arenaDoublings = 7

// arenaFirstChunk doubled arenaDoublings times is arenaMaxChunk: the
// array fails to compile otherwise.
var _ = [1]struct{}{}[arenaFirstChunk<<arenaDoublings-arenaMaxChunk]

// arenaObjsOffset returns where an array of n objects T and their
// companions P puts its first object: after the companions, at T's
// alignment, as Go lays out a struct of the two arrays.
func arenaObjsOffset[T, P any](n int) uintptr {
	var t T
	var p P
	off := uintptr(n) * unsafe.Sizeof(p)
	align := unsafe.Alignof(t)
	return (off + align - 1) &^ (align - 1)
}

// newArenaChunk returns an array of n objects T and their companions, as
// one allocation of a struct of two arrays, which reflect builds: the
// collector scans such a struct from its start to its last pointer word
// and no further.
//
// Its memory is written once before use. The runtime takes a large
// allocation fresh from the kernel and writes nothing into it; an
// account's first access is often a read (a ledger's length, a balance),
// which maps the kernel's shared zero page, and the first write then
// faults again to copy it, flushing the TLB of every processor the
// process runs on. On this 2-vCPU guest those flushes (inter-processor
// interrupts) made time to ready with 1,000,000 accounts 4.2 s instead of
// 2.6 (docs/PERFORMANCE.md, "Recovery on both cores"). Written first, each
// page is faulted in once, with no flush. The kernel maps its pages first,
// all in one call (populate), rather than one page fault at each 4 KiB the
// clear writes: 1,000,000 accounts are 125,000 pages, and their faults
// were 0.2-1.3 s of a snapshot's load (docs/PERFORMANCE.md, "The accounts'
// pages mapped in one call").
func newArenaChunk[T, P any](n int) arenaChunk {
	typ := reflect.StructOf([]reflect.StructField{
		{Name: "Companions", Type: reflect.ArrayOf(n, reflect.TypeFor[P]())},
		{Name: "Objects", Type: reflect.ArrayOf(n, reflect.TypeFor[T]())},
	})
	off := typ.Field(1).Offset
	if off != arenaObjsOffset[T, P](n) {
		panic(fmt.Sprintf("core: arena: objects at %d in an array of %d, not %d", off, n, arenaObjsOffset[T, P](n)))
	}
	v := reflect.New(typ)
	base := v.UnsafePointer()
	populate(unsafe.Slice((*byte)(base), typ.Size()))
	v.Elem().SetZero()
	return arenaChunk{objs: unsafe.Add(base, off), n: n}
}

// alloc returns a new object, zero but for what init sets in it, given
// the object and its ref; init runs under the arena's lock, so that every
// walk sees what it sets. The object is not findable until the state
// stores its ref.
func (r *arena[T, P]) alloc(init func(*T, arenaRef)) *T {
	r.mu.Lock()
	defer r.mu.Unlock()
	var dir []arenaChunk
	if d := r.dir.Load(); d != nil {
		dir = *d
	}
	if len(dir) == 0 || r.used == dir[len(dir)-1].n {
		// The last index is left unused: its last ref, plus one in
		// idMap's slots, would wrap to 0, a free slot.
		if len(dir) >= arenaMaxChunks-1 {
			panic("core: arena: more objects than refs can name")
		}
		dir = append(dir, newArenaChunk[T, P](arenaChunkLen(len(dir))))
		r.dir.Store(&dir)
		r.used = 0
	}
	i := r.used
	r.used++
	p := arenaObj[T](dir[len(dir)-1], i)
	init(p, arenaRef((len(dir)-1)<<arenaChunkBits|i))
	return p
}

// arenaObj returns object i of array c.
func arenaObj[T any](c arenaChunk, i int) *T {
	var t T
	return (*T)(unsafe.Add(c.objs, uintptr(i)*unsafe.Sizeof(t)))
}

// at returns the object ref names. ref must be one alloc returned.
func (r *arena[T, P]) at(ref arenaRef) *T {
	c := (*r.dir.Load())[ref>>arenaChunkBits]
	i := int(ref & (arenaMaxChunk - 1))
	if i >= c.n {
		panic(fmt.Sprintf("core: arena: ref %#x past its array of %d", ref, c.n))
	}
	return arenaObj[T](c, i)
}

// companion returns the companion of obj, which alloc returned with ref:
// the array's companions come before its objects, in the same order, so
// that its place is obj's less the distance between the two.
func companion[T, P any](obj *T, ref arenaRef) *P {
	var t T
	var p P
	n := arenaChunkLen(int(ref >> arenaChunkBits))
	i := uintptr(ref & (arenaMaxChunk - 1))
	base := unsafe.Add(unsafe.Pointer(obj), -int(arenaObjsOffset[T, P](n)+i*unsafe.Sizeof(t)))
	return (*P)(unsafe.Add(base, i*unsafe.Sizeof(p)))
}

// each calls fn for every object allocated before it was called, in
// memory order, until fn returns false. It holds no lock while fn runs.
// Some of them may never have been stored in the state (for an account,
// stored says).
func (r *arena[T, P]) each(fn func(*T) bool) { r.eachPart(0, 1, fn) }

// eachPart is each over part of the arrays, those whose index is part
// modulo parts: parts goroutines, one for each part, see every object
// once between them, each in memory order.
func (r *arena[T, P]) eachPart(part, parts int, fn func(*T) bool) {
	r.mu.Lock()
	var chunks []arenaChunk
	if d := r.dir.Load(); d != nil {
		chunks = slices.Clone(*d)
		chunks[len(chunks)-1].n = r.used // as far as it is used
	}
	r.mu.Unlock()
	for j := part; j < len(chunks); j += parts {
		c := chunks[j]
		for i := range c.n {
			if !fn(arenaObj[T](c, i)) {
				return
			}
		}
	}
}
