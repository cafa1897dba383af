package snapshot_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"marketd/core"
	"marketd/core/money"
)

// A state far larger than one record may hold (900 accounts with 20 trades
// of 1,000 four-byte runes of reasoning each: about 72 MB of images) must be
// snapshotted in chunks and recovered exactly, not crash the process.
func TestSnapshotLargerThanOneRecord(t *testing.T) {
	dir := t.TempDir()
	c := newClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	n := start(t, dir, c)
	w := newWorkload(t, n, 1)
	mv, err := n.e.CreateMarket(w.ctx, core.NewMarket{Creator: w.admin, Title: "m", Category: "c",
		ClosesAt: c.Now().Add(time.Hour), Alpha: 0.05, Liquidity: money.Units(1000)})
	if err != nil {
		t.Fatal(err)
	}
	reason := strings.Repeat("\U0001D11E", core.MaxReasoningRunes)
	var wg sync.WaitGroup
	for g := range 900 {
		wg.Go(func() {
			v, err := n.e.CreateAccount(w.ctx, core.NewAccount{Name: fmt.Sprintf("user%d", g), Bonus: money.Units(1000)})
			if err != nil {
				t.Error(err)
				return
			}
			for range core.RecentTradesKept {
				if _, err := n.e.Trade(w.ctx, core.TradeRequest{Account: v.ID, Market: mv.ID, Side: core.Yes, Shares: 1, Reasoning: reason}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	h, err := n.snaps.Take(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Chunks < 9 {
		t.Fatalf("%d chunks for about 72 MB of images", h.Chunks)
	}
	want := n.e.State().Canonical()
	n.stop()
	st, log, rec, err := recoverDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if rec.Snapshot == nil {
		t.Fatal("recovery did not use the snapshot")
	}
	requireState(t, "large snapshot", st.Canonical(), want)
}

// A log that lost records a snapshot relies on (here: the whole log
// directory) must stop recovery, not yield an empty or older state.
func TestRecoverRefusesLostLog(t *testing.T) {
	dir := t.TempDir()
	_, n := runRecorded(t, dir, 8, 60, 10)
	if _, ok := n.snaps.Last(); !ok {
		t.Fatal("no snapshot was taken")
	}
	n.stop()
	if err := os.RemoveAll(walDir(dir)); err != nil {
		t.Fatal(err)
	}
	if _, log, _, err := recoverDir(dir); err == nil {
		log.Close()
		t.Fatal("recovery succeeded with the log gone")
	}
}
