package sweep

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestExpired: the expired entries go and the others stay; the map is
// remade, with its size as the peak, only when it dropped entries and is
// down to a quarter of its peak.
func TestExpired(t *testing.T) {
	for _, c := range []struct {
		name                  string
		entries, expiredBelow int
		peak                  int
		wantPeak, wantDrop    int
		remade                bool
	}{
		{"nothing expired", 10, 0, 40, 40, 0, false},
		{"some expired, above a quarter", 10, 2, 16, 16, 2, false},
		{"down to a quarter", 10, 6, 16, 4, 6, true},
		{"all expired", 10, 10, 10, 0, 10, true},
		{"empty", 0, 0, 8, 8, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := make(map[int]int, c.entries)
			for i := range c.entries {
				m[i] = i
			}
			before := fmt.Sprintf("%p", m)
			kept, peak, dropped := Expired(m, c.peak, func(v int) bool { return v < c.expiredBelow })
			if peak != c.wantPeak || dropped != c.wantDrop || len(kept) != c.entries-c.wantDrop {
				t.Fatalf("peak %d, dropped %d, kept %d; want %d, %d, %d", peak, dropped, len(kept), c.wantPeak, c.wantDrop, c.entries-c.wantDrop)
			}
			if remade := fmt.Sprintf("%p", kept) != before; remade != c.remade {
				t.Errorf("map remade %v; want %v", remade, c.remade)
			}
			for k, v := range kept {
				if v < c.expiredBelow || k != v {
					t.Errorf("kept %d: %d, which expired or changed", k, v)
				}
			}
		})
	}
}

// TestExpiredProperty: on random maps, what is kept is exactly what did
// not expire.
func TestExpiredProperty(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	for range 200 {
		n := r.IntN(100)
		m := make(map[int]bool, n)
		want := 0
		for i := range n {
			m[i] = r.IntN(2) == 0
			if !m[i] {
				want++
			}
		}
		kept, peak, dropped := Expired(m, n+r.IntN(100), func(expired bool) bool { return expired })
		if len(kept) != want || dropped != n-want || peak < len(kept) {
			t.Fatalf("seed %d: kept %d, dropped %d, peak %d; want %d kept of %d", seed, len(kept), dropped, peak, want, n)
		}
		for _, expired := range kept {
			if expired {
				t.Fatalf("seed %d: an expired entry kept", seed)
			}
		}
	}
}
