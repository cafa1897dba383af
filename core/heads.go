package core

import "sync"

// headArrays hands out short slices of T side by side in shared arrays of
// arrayLen entries, instead of one small heap object each. It is for the
// first entries of per-account lists and tables: with 1,000,000 accounts,
// one object per account for each of them is a million more objects for
// the collector to find and mark every cycle (docs/PERFORMANCE.md, "A
// heap the collector marks quickly"). One trade by each of a million
// accounts made three such objects each, and took a full collection's CPU
// from about 90 ms to 560-820 ms; with their heads in shared arrays, to
// 160-170 ms (BenchmarkMillionAccounts/gc-traded in bench/populate).
//
// Each slice handed out has a length and capacity of the entries asked
// for, in a part of an array that no other take returns: its holder owns
// it, may write its entries in place, and an append past it moves the
// holder's list to an array of its own, as append always does. An array
// lives while any holder still references a slice of it; what a holder
// left behind when it grew stays there until then. Safe for concurrent
// use: the accounts that take heads are under their own locks, not one
// lock.
type headArrays[T any] struct {
	// arrayLen is the entries of each array; a take of more is a bug.
	arrayLen int
	mu       sync.Mutex
	array    []T // len: the entries handed out; cap: arrayLen
}

// take returns a slice of n zero entries, 1 <= n <= arrayLen, of length
// and capacity n, in one of h's arrays: a new array is started when the
// current one has fewer than n entries left.
func (h *headArrays[T]) take(n int) []T {
	if n < 1 || n > h.arrayLen {
		panic("BUG: headArrays.take of a count outside 1 to the array's length")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if cap(h.array)-len(h.array) < n {
		h.array = make([]T, 0, h.arrayLen)
	}
	i := len(h.array)
	h.array = h.array[:i+n]
	return h.array[i : i+n : i+n]
}

// The entries of each array of the accounts' heads: 256 KiB of ledger
// entries or fills (64 bytes each), 192 KiB of positions (96 bytes each,
// two to a table). Few enough arrays that the collector finds their
// spans in its caches; small enough that one kept alive by a few
// accounts wastes little.
const (
	// ledgerHeadsLen: nearly every account has one ledger entry (its
	// signup bonus), and after a minute of trading most of a million
	// accounts have two (docs/PERFORMANCE.md, "The 1,000,000-account
	// row's slowest seconds"): each ledger's first two entries are taken
	// here (chunkList.pushHead).
	ledgerHeadsLen = 4096
	// fillHeadsLen: an account's first two fills are taken here, for the
	// same reason.
	fillHeadsLen = 4096
	// positionHeadsLen: an account's first positions table (its
	// positionTableMinSlots slots) is taken here, for the same reason as
	// its first fill.
	positionHeadsLen = 2048
)

// The shared arrays of the accounts' first ledger entries, first fills
// and first positions tables. Package variables, not the State's: an
// account's lists do not know their state, and a slice taken from any
// array serves any account; the arrays hold no state of their own beyond
// the entries their holders own.
var (
	ledgerHeads   = headArrays[ledgerSlot]{arrayLen: ledgerHeadsLen}
	fillHeads     = headArrays[fill]{arrayLen: fillHeadsLen}
	positionHeads = headArrays[Position]{arrayLen: positionHeadsLen}
)
