package core

import (
	"slices"
	"testing"
)

// testValue is a chunkList entry read as itself.
type testValue int

func (v testValue) value() int { return int(v) }

// listValues returns the values of every entry of l.
func listValues[T any, S listValue[T]](l *chunkList[S]) []T {
	v := l.snapshot()
	return appendValues(nil, &v, 0, v.Len())
}

// TestChunkList compares a chunkList with a plain slice across the head's
// end and the fixed arrays' ends: every entry, every range, and a snapshot
// that must not see later pushes.
func TestChunkList(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
	}{
		{"empty", 0},
		{"one", 1},
		{"head less one", listChunkLen - 1},
		{"head full", listChunkLen},
		{"first array begun", listChunkLen + 1},
		{"first array full", 2 * listChunkLen},
		{"second array begun", 2*listChunkLen + 1},
		{"several arrays", 5*listChunkLen + 17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l chunkList[testValue]
			var want []int
			for i := range tc.n {
				l.push(testValue(i * 7))
				want = append(want, i*7)
			}
			if l.Len() != tc.n {
				t.Fatalf("Len() = %d, want %d", l.Len(), tc.n)
			}
			snap := l.snapshot()
			for i := range 3 * listChunkLen {
				l.push(testValue(-i)) // after the snapshot: it must not see them
			}
			if got := appendValues(nil, &snap, 0, snap.Len()); !slices.Equal(got, want) {
				t.Fatalf("snapshot holds %v, want %v", got, want)
			}
			for i, v := range snap.all() {
				if int(*v) != want[i] || int(*snap.at(i)) != want[i] {
					t.Fatalf("entry %d: all gives %d, at %d, want %d", i, *v, *snap.at(i), want[i])
				}
			}
			for _, r := range [][2]int{{0, 0}, {0, tc.n}, {tc.n / 3, tc.n / 2}, {tc.n / 2, tc.n}, {max(tc.n-1, 0), tc.n}} {
				if got := appendValues([]int{-1}, &snap, r[0], r[1]); !slices.Equal(got[1:], want[r[0]:r[1]]) || got[0] != -1 {
					t.Fatalf("appendTo(%d, %d) = %v, want [-1] + %v", r[0], r[1], got, want[r[0]:r[1]])
				}
			}
		})
	}
}

// TestChunkListAppendsWithoutCopying: past the head, an append allocates
// one fixed array per listChunkLen entries and moves nothing.
func TestChunkListAppendsWithoutCopying(t *testing.T) {
	var l chunkList[ledgerSlot]
	for range listChunkLen {
		l.push(ledgerSlot{})
	}
	allocs := testing.AllocsPerRun(10, func() {
		for range listChunkLen {
			l.push(ledgerSlot{LedgerEntry: LedgerEntry{Amount: 1}})
		}
	})
	if allocs != 1 {
		t.Fatalf("%v allocations per %d appends, want 1", allocs, listChunkLen)
	}
}
