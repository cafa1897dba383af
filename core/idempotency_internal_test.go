package core

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestIdemKeyPut: whatever the order in which a batch's entries are
// stored, and with replacements, a key holds one entry per index, in index
// order, the last stored for each; checked against a plain slice.
func TestIdemKeyPut(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for round := range 200 {
		var k idemKey
		want := map[uint32]int64{}
		n := 1 + rng.IntN(25)
		for i := range n {
			idx := uint32(rng.IntN(20))
			ie := IdemEntry{Key: "k", Index: idx, Time: int64(i)}
			if i == 0 {
				k = idemKey{first: ie}
			} else {
				k.put(ie)
			}
			want[idx] = int64(i)
		}
		got := k.entries()
		idxs := make([]uint32, 0, len(want))
		for idx := range want {
			idxs = append(idxs, idx)
		}
		slices.Sort(idxs)
		if len(got) != len(idxs) {
			t.Fatalf("round %d: %d entries, want %d (%v)", round, len(got), len(idxs), idxs)
		}
		for i, e := range got {
			if e.Index != idxs[i] || e.Time != want[e.Index] || !k.has(e.Index) {
				t.Fatalf("round %d: entry %d is %s, want index %d of time %d", round, i,
					fmt.Sprintf("index %d time %d", e.Index, e.Time), idxs[i], want[idxs[i]])
			}
		}
	}
}
