package snapshot_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// TestSnapshotWhileTrading takes snapshots while many goroutines trade:
// each snapshot is a fuzzy capture, and recovering from the newest one plus
// the log must give exactly the final state, on the real log and codecs.
func TestSnapshotWhileTrading(t *testing.T) {
	dir := t.TempDir()
	c := newClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	n := start(t, dir, c)
	w := newWorkload(t, n, 42)
	for range 6 {
		w.accts = append(w.accts, mustAccount(t, w, len(w.accts)))
	}
	for range 4 {
		v, err := n.e.CreateMarket(w.ctx, core.NewMarket{Creator: w.admin, Title: "m", Category: "c",
			ClosesAt: c.Now().Add(time.Hour), Alpha: 0.05, Liquidity: money.Units(500)})
		if err != nil {
			t.Fatal(err)
		}
		w.markets = append(w.markets, v.ID)
	}
	var stop atomic.Bool
	var snaps atomic.Int64
	snapDone := make(chan error, 1)
	go func() {
		for !stop.Load() {
			if _, err := n.snaps.Take(w.ctx); err != nil {
				snapDone <- err
				return
			}
			snaps.Add(1)
		}
		snapDone <- nil
	}()
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 3))
			// At least 400 trades each, and on until two snapshots were
			// taken meanwhile: on a busy machine 3,200 trades can take
			// less time than one snapshot.
			for i := 0; i < 400 || snaps.Load() < 2 && i < 100_000; i++ {
				a, m := w.accts[r.IntN(len(w.accts))], w.markets[r.IntN(len(w.markets))]
				_, err := n.e.Trade(w.ctx, core.TradeRequest{Account: a, Market: m, Side: core.Side(r.IntN(2)),
					Shares: money.Units(1 + r.Int64N(10)), Sell: r.IntN(3) == 0})
				if err != nil && !errors.Is(err, core.ErrInsufficientShares) && !errors.Is(err, core.ErrInsufficientLiquidity) {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	if err := <-snapDone; err != nil {
		t.Fatal(err)
	}
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if n := snaps.Load(); n < 2 {
		t.Fatalf("only %d snapshots taken during trading", n)
	}
	want := n.e.State().Canonical()
	n.stop()
	st, log, rec, err := recoverDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if rec.Snapshot == nil {
		t.Fatal("recovery did not use a snapshot")
	}
	requireState(t, fmt.Sprintf("after %d snapshots", snaps.Load()), st.Canonical(), want)
}

func mustAccount(t *testing.T, w *workload, i int) uuid.UUID {
	v, err := w.n.e.CreateAccount(w.ctx, core.NewAccount{Name: fmt.Sprintf("trader%d", i), PasswordHash: []byte("h"), Bonus: money.Units(100_000)})
	if err != nil {
		t.Fatal(err)
	}
	return v.ID
}
