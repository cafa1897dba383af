package core

import (
	"iter"
	"slices"
)

// listChunkLen is the number of entries in each fixed array of a
// chunkList after its first listChunkLen entries.
const listChunkLen = 256

// chunkList is an append-only list whose entries never move once
// appended: an account's ledger and fills, which grow by one entry per
// trade without bound. A slice grown by append copies its whole contents
// each time it outgrows its array, by a factor of 1.25 once it is large:
// about four copies and five times the entry's size allocated per entry,
// a quarter of a trade's CPU with 50,000 fills per account
// (docs/PERFORMANCE.md, "The trade path's own CPU"). Here the first
// listChunkLen entries grow as a slice (most accounts have few), and the
// rest fill fixed arrays allocated one at a time.
//
// The zero value is an empty list. Like the slices it replaces, a copy
// taken under the owner's lock (snapshot) stays valid and unchanged
// without the lock: the owner only writes past the copy's length, into
// arrays the copy may share but never reads there, and never changes an
// element of head or more that the copy can see.
type chunkList[T any] struct {
	head []T                // entries [0, min(n, listChunkLen))
	more []*[listChunkLen]T // entry listChunkLen+i is more[i/listChunkLen][i%listChunkLen]
	// tail is more's last array, where push writes: reading it from more
	// was a cache miss per push over accounts that are cold, a line of
	// more's own array besides the entry's (docs/PERFORMANCE.md, "A
	// trade's working set over 1,024 accounts").
	tail *[listChunkLen]T
	n    int // entries in all
}

// push appends v.
func (l *chunkList[T]) push(v T) {
	if l.n < listChunkLen {
		l.head = append(l.head, v)
		l.n++
		return
	}
	i := l.n - listChunkLen
	if i%listChunkLen == 0 {
		l.tail = new([listChunkLen]T)
		l.more = append(l.more, l.tail)
	}
	l.tail[i%listChunkLen] = v
	l.n++
}

// pushFirst makes an empty list hold one entry, the only one of one, a
// slice whose capacity is 1: a list's first entry may come from memory
// shared with other lists (ledger_heads.go), which the next push leaves
// alone since it outgrows the slice.
func (l *chunkList[T]) pushFirst(one []T) {
	if l.n != 0 || len(one) != 1 || cap(one) != 1 {
		panic("BUG: chunkList.pushFirst on a list that is not empty, or of a slice that is not one entry")
	}
	l.head, l.n = one, 1
}

// Len returns the number of entries.
func (l *chunkList[T]) Len() int { return l.n }

// at returns entry i, 0 <= i < Len().
func (l *chunkList[T]) at(i int) *T {
	if i < listChunkLen {
		return &l.head[i]
	}
	i -= listChunkLen
	return &l.more[i/listChunkLen][i%listChunkLen]
}

// snapshot returns the list as it is now, for reading without the owner's
// lock after it is released.
func (l *chunkList[T]) snapshot() chunkList[T] {
	return chunkList[T]{head: l.head[:len(l.head):len(l.head)], more: l.more[:len(l.more):len(l.more)], tail: l.tail, n: l.n}
}

// listValue is an entry of a chunkList kept in a form of its own (a fill,
// a ledgerSlot), read as a T.
type listValue[T any] interface{ value() T }

// appendValues appends the values of l's entries [start, end) to dst,
// 0 <= start <= end <= l.Len().
func appendValues[T any, S listValue[T]](dst []T, l *chunkList[S], start, end int) []T {
	dst = slices.Grow(dst, end-start)
	for start < end {
		var arr []S
		if start < listChunkLen {
			arr = l.head[start:min(end, listChunkLen)]
		} else {
			i := start - listChunkLen
			off := i % listChunkLen
			arr = l.more[i/listChunkLen][off:min(listChunkLen, off+end-start)]
		}
		for i := range arr {
			dst = append(dst, arr[i].value())
		}
		start += len(arr)
	}
	return dst
}

// all yields every entry with its index, oldest first.
func (l *chunkList[T]) all() iter.Seq2[int, *T] {
	return func(yield func(int, *T) bool) {
		for i := range l.n {
			if !yield(i, l.at(i)) {
				return
			}
		}
	}
}
