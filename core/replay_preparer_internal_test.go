package core

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
)

// TestCachedLookup looks up random IDs, of objects added as it goes, through
// caches small enough that IDs share slots: every answer must be what the
// map says at that moment, an object not found yet must be found once
// added, and a slot taken by another ID must not answer for it.
func TestCachedLookup(t *testing.T) {
	for _, slots := range []int{1, 2, 8} {
		const seed = 0x5107
		t.Run(fmt.Sprintf("slots=%d", slots), func(t *testing.T) {
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, uint64(slots)))
			ids := make([]uuid.UUID, 40)
			for i := range ids {
				for j := range ids[i] {
					ids[i][j] = byte(r.Uint32())
				}
			}
			objs := map[uuid.UUID]*market{}
			look := func(id uuid.UUID) *market { return objs[id] }
			cache := make([]cachedObject[market], slots)
			for step := range 5000 {
				id := ids[r.IntN(len(ids))]
				if r.IntN(10) == 0 && objs[id] == nil {
					objs[id] = &market{id: id}
				}
				if got, want := cachedLookup(cache, id, look), objs[id]; got != want {
					t.Fatalf("seed %d, step %d: %s: found %p, the map holds %p", seed, step, id, got, want)
				}
			}
		})
	}
}
