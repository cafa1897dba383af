package core

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// idMapIDs returns n IDs: random ones from a seeded PCG, and runs of
// sequential ones that share every byte but the low ones (the shard's byte
// included), which hash to one shard and collide without a good mix.
func idMapIDs(rng *rand.Rand, n int) []uuid.UUID {
	ids := make([]uuid.UUID, n)
	for i := range ids {
		if i%3 == 0 {
			binary.BigEndian.PutUint64(ids[i][8:], uint64(i)<<8) // id[15] is 0
			continue
		}
		binary.LittleEndian.PutUint64(ids[i][:8], rng.Uint64())
		binary.LittleEndian.PutUint64(ids[i][8:], rng.Uint64())
	}
	return ids
}

// TestIDMapFindsWhatWasStored stores IDs while other goroutines look them
// up, across the tables' growth: a lookup finds an ID stored before it
// with its object, never another's, and the walk and the count see every
// entry once.
func TestIDMapFindsWhatWasStored(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, c := range []struct {
		name    string
		n       int
		reserve int
	}{
		{"empty", 0, 0},
		{"grown one at a time", 5000, 0},
		{"reserved", 5000, 5000},
		{"reserved short", 5000, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(c.n)))
			ids := idMapIDs(rng, c.n)
			st := NewState()
			m := idMap[market, struct{}]{mem: &st.marketMem}
			m.reserve(c.reserve)
			objs := make([]*market, len(ids))
			for i, id := range ids {
				objs[i] = st.newMarket(id)
			}
			// stored[i] is closed once ids[i] is stored.
			stored := make([]chan struct{}, len(ids))
			for i := range stored {
				stored[i] = make(chan struct{})
			}
			var wg sync.WaitGroup
			for w := range 2 {
				wg.Go(func() {
					for i := w; i < len(ids); i += 2 {
						m.store(ids[i], objs[i].ref)
						close(stored[i])
					}
				})
			}
			for r := range 2 {
				wg.Go(func() {
					rr := rand.New(rand.NewPCG(seed, uint64(r)))
					for range 4 * len(ids) {
						i := rr.IntN(len(ids))
						select {
						case <-stored[i]:
							if got, ok := m.load(ids[i]); !ok || got != objs[i] {
								t.Errorf("load(%v) = %p, %v after its store of %p", ids[i], got, ok, objs[i])
								return
							}
						default:
							if got, ok := m.load(ids[i]); ok && got != objs[i] {
								t.Errorf("load(%v) = %p, the object of another ID", ids[i], got)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			if _, ok := m.load(uuid.New()); ok {
				t.Error("an ID never stored was found")
			}
			if got := m.len(); got != len(ids) {
				t.Errorf("len = %d, want %d", got, len(ids))
			}
			seen := make(map[uuid.UUID]int, len(ids))
			m.rangeValues(func(p *market) bool { seen[p.id]++; return true })
			for i, id := range ids {
				if seen[id] != 1 {
					t.Fatalf("walk saw ids[%d] %d times", i, seen[id])
				}
			}
			// A second store of an ID replaces its object.
			if len(ids) > 0 {
				o := st.newMarket(ids[0])
				m.store(ids[0], o.ref)
				if got, _ := m.load(ids[0]); got != o || m.len() != len(ids) {
					t.Errorf("after a second store: load = %p (want %p), len %d", got, o, m.len())
				}
			}
		})
	}
}

// TestIDMapLoadAllocatesNothing: a lookup is on every trade's path.
func TestIDMapLoadAllocatesNothing(t *testing.T) {
	st := NewState()
	id := uuid.New()
	st.addMarket(st.newMarket(id))
	m := &st.markets
	if n := testing.AllocsPerRun(100, func() { m.load(id) }); n != 0 {
		t.Errorf("load allocates %v times", n)
	}
}

// TestIDMapLoadsWhileTheArenaGrows: one goroutine allocates accounts and
// stores them, the arena adding arrays and the map growing its tables as
// it goes, while others look up the IDs stored so far: every lookup finds
// the account stored for its ID, resolved through whichever directory of
// arrays it loads.
func TestIDMapLoadsWhileTheArenaGrows(t *testing.T) {
	st := NewState()
	const n = 4*arenaMaxChunk + 100
	ids := idMapIDs(rand.New(rand.NewPCG(1, 2)), n)
	var published atomic.Int64 // ids[:published] are stored
	var wg sync.WaitGroup
	wg.Go(func() {
		for i, id := range ids {
			a := st.newAccount(id)
			st.accounts.store(id, a.ref)
			published.Store(int64(i + 1))
		}
	})
	for r := range 3 {
		wg.Go(func() {
			rr := rand.New(rand.NewPCG(3, uint64(r)))
			for published.Load() < n {
				k := published.Load()
				if k == 0 {
					continue
				}
				id := ids[rr.IntN(int(k))]
				if a, ok := st.accounts.load(id); !ok || a.id != id {
					t.Errorf("load(%v) after its store: %v, found %v", id, a, ok)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if a := st.account(id); a == nil || st.accountMem.at(a.ref) != a {
			t.Fatalf("account %v: %p, not at its own ref", id, a)
		}
	}
	// Markets resolve through their own arena.
	m := st.newMarket(ids[0])
	st.addMarket(m)
	if got := st.market(ids[0]); got != m || st.marketMem.at(m.ref) != m {
		t.Errorf("market %v: found %p, want %p", ids[0], got, m)
	}
}
