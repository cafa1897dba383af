package core

import "sync"

// ledgerHeadsChunk is the number of first ledger entries in each array of
// ledgerHeads: about 230 KB.
const ledgerHeadsChunk = 4096

// ledgerHeads holds the first entry of every ledger, side by side in
// arrays, instead of one 64-byte heap object each: nearly every account
// has exactly one entry (its signup bonus), and with 1,000,000 accounts
// those objects were 1,000,000 of the 2,500,000 the collector marked each
// cycle (docs/PERFORMANCE.md, "A heap the collector marks quickly"). An
// array lives while any ledger holds an entry of it.
var ledgerHeads struct {
	mu    sync.Mutex
	chunk []ledgerSlot // len used, cap ledgerHeadsChunk
}

// firstLedgerEntry returns a slice of length and capacity 1 holding l, in
// one of ledgerHeads' arrays: a ledger's second entry, appended to it,
// moves the list to an array of its own as append always does.
func firstLedgerEntry(l LedgerEntry) []ledgerSlot {
	h := &ledgerHeads
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.chunk) == cap(h.chunk) {
		h.chunk = make([]ledgerSlot, 0, ledgerHeadsChunk)
	}
	i := len(h.chunk)
	h.chunk = append(h.chunk, ledgerSlot{LedgerEntry: l})
	return h.chunk[i : i+1 : i+1]
}
