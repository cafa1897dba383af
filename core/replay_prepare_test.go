package core_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"marketd/core"
)

// TestPropertyApplyPrepared replays random workloads' logs with every
// record prepared at a random earlier point, between the state before the
// whole replay (nothing found) and the state just before the record
// (everything found), as replay's decoding workers prepare records ahead of
// the goroutine that applies them; the state must be exactly the one plain
// Apply rebuilds, and the live one.
func TestPropertyApplyPrepared(t *testing.T) {
	const steps = 300
	for i := range 8 {
		seed := uint64(i) + 0x9e9a
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			w := newWorkload(t, seed)
			for step := range steps {
				w.step(step)
			}
			recs := w.h.j.Records(t)
			r := rand.New(rand.NewPCG(seed, 1))
			// due[k] are the records prepared once k records are applied.
			due := make([][]int, len(recs)+1)
			for i := range recs {
				k := r.IntN(i + 1)
				due[k] = append(due[k], i)
			}
			st := core.NewState()
			// Half the records are prepared by a Preparer, as replay's
			// workers do, half by State.Prepare.
			preparer := st.NewPreparer()
			preps := make([]core.Prepared, len(recs))
			for i, rec := range recs {
				for _, j := range due[i] {
					if j%2 == 0 {
						preparer.Prepare(recs[j], &preps[j])
					} else {
						st.Prepare(recs[j], &preps[j])
					}
				}
				if err := st.ApplyPrepared(uint64(i+1), rec, &preps[i]); err != nil {
					t.Fatalf("seed %d: record %d: %v", seed, i+1, err)
				}
			}
			requireEqual(t, st, w.h.replayed())
			requireEqual(t, st, w.h.e.State())
			if err := st.Check(); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			// Replay stores a market's last applied LSN once, when the
			// check publishes the views.
			if bad := core.MarketLagMismatches(st); len(bad) > 0 {
				t.Fatalf("seed %d: after the check: %v", seed, bad)
			}
		})
	}
}
