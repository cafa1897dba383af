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
// The zero value is an empty list. Like the slices it replaces, a view
// taken under the owner's lock (snapshot) stays valid and unchanged
// without the lock: the owner only writes past the view's length, into
// arrays the view may share but never reads there, and never changes an
// element that the view can see.
//
// The header is 32 bytes, two to a cache line: a trade appends to its
// currency's ledger and to the fills, and reads and writes only last
// (docs/PERFORMANCE.md, "The account's cold lines"); rest, which the
// readers need, changes once per listChunkLen entries.
type chunkList[T any] struct {
	// last is the array push writes into, its length the entries written
	// there: the head (entries [0, min(Len(), listChunkLen))) while rest is
	// nil, else rest.more's last array.
	last []T
	rest *chunkRest[T]
}

// chunkRest is where a chunkList past its first listChunkLen entries
// keeps its arrays.
type chunkRest[T any] struct {
	head []T                // entries [0, listChunkLen)
	more []*[listChunkLen]T // entry listChunkLen+i is more[i/listChunkLen][i%listChunkLen]
}

// push appends v.
func (l *chunkList[T]) push(v T) {
	if n := len(l.last); n < cap(l.last) && (l.rest != nil || n < listChunkLen) {
		l.last = l.last[:n+1]
		l.last[n] = v
		return
	}
	l.pushGrowing(v)
}

// pushGrowing is push when last is full: the head grows as a slice until
// it holds listChunkLen entries, then each fixed array is a new one.
func (l *chunkList[T]) pushGrowing(v T) {
	if l.rest == nil && len(l.last) < listChunkLen {
		l.last = append(l.last, v)
		return
	}
	if l.rest == nil {
		l.rest = &chunkRest[T]{head: l.last}
	}
	arr := new([listChunkLen]T)
	arr[0] = v
	l.rest.more = append(l.rest.more, arr)
	l.last = arr[:1]
}

// pushFirst makes an empty list hold one entry, the only one of one, a
// slice whose capacity is 1: a list's first entry may come from memory
// shared with other lists (ledger_heads.go), which the next push leaves
// alone since it outgrows the slice.
func (l *chunkList[T]) pushFirst(one []T) {
	if !l.empty() || len(one) != 1 || cap(one) != 1 {
		panic("BUG: chunkList.pushFirst on a list that is not empty, or of a slice that is not one entry")
	}
	l.last = one
}

// empty reports whether the list has no entry, reading only last.
func (l *chunkList[T]) empty() bool { return len(l.last) == 0 }

// Len returns the number of entries.
func (l *chunkList[T]) Len() int {
	if l.rest == nil {
		return len(l.last)
	}
	return listChunkLen*len(l.rest.more) + len(l.last)
}

// snapshot returns a view of the list as it is now, for reading without
// the owner's lock after it is released.
func (l *chunkList[T]) snapshot() listView[T] {
	v := listView[T]{last: l.last[:len(l.last):len(l.last)]}
	if l.rest != nil {
		v.head, v.more = l.rest.head, l.rest.more[:len(l.rest.more):len(l.rest.more)]
	}
	return v
}

// listView is a chunkList as it was when its owner took it (snapshot):
// what the readers read, with or without the owner's lock.
type listView[T any] struct {
	last []T                // the array the list wrote into, as long as it was
	head []T                // the first listChunkLen entries; nil while last is the head
	more []*[listChunkLen]T // the arrays after the head, the last of them last's
}

// Len returns the number of entries.
func (v *listView[T]) Len() int {
	if v.head == nil {
		return len(v.last)
	}
	return listChunkLen*len(v.more) + len(v.last)
}

// at returns entry i, 0 <= i < Len().
func (v *listView[T]) at(i int) *T {
	switch {
	case v.head == nil:
		return &v.last[i]
	case i < listChunkLen:
		return &v.head[i]
	}
	i -= listChunkLen
	return &v.more[i/listChunkLen][i%listChunkLen]
}

// listValue is an entry of a chunkList kept in a form of its own (a fill,
// a ledgerSlot), read as a T.
type listValue[T any] interface{ value() T }

// appendValues appends the values of v's entries [start, end) to dst,
// 0 <= start <= end <= v.Len().
func appendValues[T any, S listValue[T]](dst []T, v *listView[S], start, end int) []T {
	dst = slices.Grow(dst, end-start)
	for start < end {
		var arr []S
		switch {
		case v.head == nil:
			arr = v.last[start:end]
		case start < listChunkLen:
			arr = v.head[start:min(end, listChunkLen)]
		default:
			i := start - listChunkLen
			off := i % listChunkLen
			arr = v.more[i/listChunkLen][off:min(listChunkLen, off+end-start)]
		}
		for i := range arr {
			dst = append(dst, arr[i].value())
		}
		start += len(arr)
	}
	return dst
}

// all yields every entry with its index, oldest first.
func (v *listView[T]) all() iter.Seq2[int, *T] {
	return func(yield func(int, *T) bool) {
		for i := range v.Len() {
			if !yield(i, v.at(i)) {
				return
			}
		}
	}
}
