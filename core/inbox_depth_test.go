package core_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// TestInboxDepthWhileMarketsRetire samples the inboxes, as a metrics
// scrape does, while markets are settled and their goroutines drop their
// inboxes (retire.go): under -race, a read of a market's inbox that the
// retiring goroutine's write is not ordered with fails the test.
func TestInboxDepthWhileMarketsRetire(t *testing.T) {
	const markets = 8
	h := newHarness(t)
	trader := h.account("trader", core.RoleSpeculator, 1000)
	base := settledMarketGoroutines(t)
	var mkts []uuid.UUID
	for i := range markets {
		m := h.market(fmt.Sprint("market ", i), 0, 100)
		if _, err := h.buy(trader, m, core.Yes, money.Units(1)); err != nil {
			t.Fatal(err)
		}
		mkts = append(mkts, m)
	}
	var stop atomic.Bool
	sampled := make(chan int)
	go func() {
		n := 0
		for !stop.Load() {
			if total, largest := h.e.InboxDepth(); total < 0 || largest > total {
				t.Errorf("inbox depth total %d, largest %d", total, largest)
			}
			n++
		}
		sampled <- n
	}()
	for _, m := range mkts {
		if _, err := h.e.Settle(h.ctx, core.SettleRequest{Market: m, Outcome: core.Yes}); err != nil {
			t.Fatal(err)
		}
	}
	waitGoroutines(t, base) // the sampling goes on until every market has retired
	stop.Store(true)
	if n := <-sampled; n == 0 {
		t.Fatal("InboxDepth never sampled")
	}
	if total, _ := h.e.InboxDepth(); total != 0 {
		t.Fatalf("inbox depth %d after every market retired, want 0", total)
	}
}
