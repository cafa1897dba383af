package core_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// TestConcurrentTradingAndCapture has many goroutines trade the same few
// accounts across several markets at once, while snapshots are captured.
// No update may be lost (conservation and the ledger chains hold), the log
// replayed alone must rebuild the live state, and so must every capture
// loaded and replayed from the position the journal had when it began.
func TestConcurrentTradingAndCapture(t *testing.T) {
	h := newHarness(t)
	var accts []uuid.UUID
	for i := range 4 {
		accts = append(accts, h.account(fmt.Sprintf("acct%d", i), core.RoleSpeculator, 1_000_000))
	}
	var markets []uuid.UUID
	for i := range 6 {
		markets = append(markets, h.market(fmt.Sprintf("m%d", i), 0.01, 1000))
	}
	const workers, perWorker = 16, 300
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range perWorker {
				a, m := accts[r.IntN(len(accts))], markets[r.IntN(len(markets))]
				var err error
				switch r.IntN(3) {
				case 0:
					_, err = h.e.Trade(h.ctx, core.TradeRequest{Account: a, Market: m, Side: core.Side(r.IntN(2)), Shares: money.Units(1 + r.Int64N(20))})
				case 1:
					_, err = h.e.Trade(h.ctx, core.TradeRequest{Account: a, Market: m, Side: core.Side(r.IntN(2)), Shares: money.Units(1 + r.Int64N(5)), Sell: true})
				default:
					_, err = h.e.SplitMerge(h.ctx, core.SplitRequest{Account: a, Market: m, Amount: money.Units(1 + r.Int64N(5)), Merge: r.IntN(2) == 0})
				}
				if err != nil && !errors.Is(err, core.ErrInsufficientShares) && !errors.Is(err, core.ErrInsufficientLiquidity) {
					errc <- err
					return
				}
			}
		})
	}
	type capture struct {
		from, maxLSN uint64
		images       []*core.Record
	}
	var caps []capture
	for range 5 {
		from := h.j.Contiguous()
		var images []*core.Record
		maxLSN, err := h.e.State().Capture(2, func(r *core.Record) error {
			images = append(images, r.Clone())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		caps = append(caps, capture{from, maxLSN, images})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
	recs := h.j.Records(t)
	for i, c := range caps {
		if c.maxLSN > uint64(len(recs)) || c.from > c.maxLSN {
			t.Fatalf("capture %d: from %d, max LSN %d, log ends at %d", i, c.from, c.maxLSN, len(recs))
		}
		requireEqual(t, fromImage(t, c.images, recs, c.from), h.e.State())
	}
}
