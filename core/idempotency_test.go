package core_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/wal/record"
)

// idemTrade is a buy of shares micro-shares of yes under key, whose stored
// answer is the trade ID and cost.
func idemTrade(acct, mkt uuid.UUID, key, body string, shares money.Amount) core.TradeRequest {
	return core.TradeRequest{Account: acct, Market: mkt, Side: core.Yes, Shares: shares,
		Idem: core.Idempotent{Key: key, Fingerprint: sha256.Sum256([]byte(body))},
		Answer: func(r *core.TradeResult) []byte {
			return fmt.Appendf(nil, "%s %d", r.TradeID, r.Cost)
		}}
}

// TestIdempotentTrade: a key's first trade stores its answer in its own
// record; a repeat is ErrIdempotencyReplay and changes nothing; another
// request under the key is ErrIdempotencyKeyReused; replay of the log and
// a snapshot image both restore the stored answer.
func TestIdempotentTrade(t *testing.T) {
	h := newHarness(t)
	a := h.account("bot", core.RoleSpeculator, 1000)
	mkt := h.market("m", 0.05, 1000)
	r, err := h.e.Trade(h.ctx, idemTrade(a, mkt, "k1", "body", money.Units(5)))
	if err != nil {
		t.Fatal(err)
	}
	bal := h.balance(a, money.KP)
	if _, err := h.e.Trade(h.ctx, idemTrade(a, mkt, "k1", "body", money.Units(5))); !errors.Is(err, core.ErrIdempotencyReplay) {
		t.Fatalf("repeat: %v, want ErrIdempotencyReplay", err)
	}
	if _, err := h.e.Trade(h.ctx, idemTrade(a, mkt, "k1", "other body", money.Units(5))); !errors.Is(err, core.ErrIdempotencyKeyReused) {
		t.Fatalf("other request under the key: %v, want ErrIdempotencyKeyReused", err)
	}
	if got := h.balance(a, money.KP); got != bal {
		t.Fatalf("balance %s after the refused repeats, want %s", got, bal)
	}
	es, err := h.e.Idempotent(h.ctx, a, "k1")
	want := fmt.Sprintf("%s %d", r.TradeID, r.Cost)
	if err != nil || len(es) != 1 || string(es[0].Answer) != want || es[0].Status != 200 {
		t.Fatalf("Idempotent = %+v, %v; want one entry answering %q", es, err, want)
	}
	if es, _ := h.e.Idempotent(h.ctx, a, "k2"); len(es) != 0 {
		t.Fatalf("unknown key: %+v", es)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
	var images []*core.Record
	if _, err := h.e.State().Capture(2, func(r *core.Record) error { images = append(images, r.Clone()); return nil }); err != nil {
		t.Fatal(err)
	}
	recs := h.j.Records(t)
	requireEqual(t, fromImage(t, images, recs, uint64(len(recs))), h.e.State())
}

// TestIdempotencyRetentionAndCap: keys expire after the retention window;
// a new key past the cap is refused while every key is live, and accepted
// once one has expired, which never evicts a live key.
func TestIdempotencyRetentionAndCap(t *testing.T) {
	lim := core.IdempotencyLimits{Retention: time.Hour, Keys: 3}
	h := newHarnessConfig(t, core.Config{CloseInterval: -1, UsageFlushInterval: -1, Idempotency: lim})
	a := h.account("bot", core.RoleSpeculator, 1000)
	mkt := h.market("m", 0.05, 1000)
	for i := range 3 {
		if _, err := h.e.Trade(h.ctx, idemTrade(a, mkt, fmt.Sprint("k", i), "b", money.Units(1))); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(10 * time.Minute)
	}
	bal := h.balance(a, money.KP)
	if _, err := h.e.Trade(h.ctx, idemTrade(a, mkt, "k3", "b", money.Units(1))); !errors.Is(err, core.ErrIdempotencyKeyLimit) {
		t.Fatalf("fourth key: %v, want ErrIdempotencyKeyLimit", err)
	}
	if h.balance(a, money.KP) != bal {
		t.Fatal("the refused key changed the balance")
	}
	// k0 expires at 60 min after its trade; we are at 30 min.
	h.clock.Advance(31 * time.Minute)
	if es, _ := h.e.Idempotent(h.ctx, a, "k0"); len(es) != 0 {
		t.Fatalf("expired key still answers: %+v", es)
	}
	if es, _ := h.e.Idempotent(h.ctx, a, "k1"); len(es) != 1 {
		t.Fatalf("live key k1: %+v", es)
	}
	if _, err := h.e.Trade(h.ctx, idemTrade(a, mkt, "k3", "b", money.Units(1))); err != nil {
		t.Fatalf("fourth key after one expired: %v", err)
	}
	if n := h.e.IdempotencyKeys(a); n != 3 {
		t.Fatalf("%d keys held, want 3", n)
	}
	// An expired key may be used again, for another request.
	h.clock.Advance(2 * time.Hour)
	if _, err := h.e.Trade(h.ctx, idemTrade(a, mkt, "k1", "another", money.Units(1))); err != nil {
		t.Fatalf("expired key reused: %v", err)
	}
	h.check()
	// Replay keeps every key (the engine drops the expired ones at
	// start); as seen now, the states are the same.
	replayed := h.replayed()
	replayed.DropExpiredIdempotency(lim, h.clock.Now())
	h.e.State().DropExpiredIdempotency(lim, h.clock.Now())
	requireEqual(t, replayed, h.e.State())
}

// TestQuoteThenTrade: a trade, split or merge sent with a quote's
// market_seq costs exactly the quoted amount, and moves market_seq by one; once another trade has moved the book,
// the same expect_seq is refused with ErrMarketMoved and nothing changes.
func TestQuoteThenTrade(t *testing.T) {
	h := newHarness(t)
	a := h.account("bot", core.RoleSpeculator, 1000)
	b := h.account("other", core.RoleSpeculator, 1000)
	mkt := h.market("m", 0.05, 1000)
	for i, req := range []core.TradeRequest{
		{Account: a, Market: mkt, Side: core.Yes, Shares: money.Units(7) + 123},
		{Account: a, Market: mkt, Side: core.No, Shares: money.Units(3)},
		{Account: a, Market: mkt, Side: core.Yes, Shares: money.Units(2) + 1, Sell: true},
	} {
		q, err := h.e.QuoteTrade(req)
		if err != nil {
			t.Fatal(err)
		}
		req.ExpectSeq, req.HasExpectSeq = q.MarketSeq, true
		r, err := h.e.Trade(h.ctx, req)
		if err != nil {
			t.Fatalf("trade %d: %v", i, err)
		}
		if r.Cost != q.Cost || r.Vig != q.Vig || r.PriceYesAfter != q.PriceYesAfter || r.PriceNoAfter != q.PriceNoAfter {
			t.Fatalf("trade %d: %+v, quoted %+v", i, r, q)
		}
		if r.MarketSeq != q.MarketSeq+1 {
			t.Fatalf("trade %d: market_seq %d after, quoted at %d", i, r.MarketSeq, q.MarketSeq)
		}
	}
	for i, sreq := range []core.SplitRequest{
		{Account: a, Market: mkt, Amount: money.Units(4) + 7},
		{Account: a, Market: mkt, Amount: money.Units(2), Merge: true},
	} {
		q, err := h.e.QuoteSplit(sreq)
		if err != nil {
			t.Fatal(err)
		}
		sreq.ExpectSeq, sreq.HasExpectSeq = q.MarketSeq, true
		r, err := h.e.SplitMerge(h.ctx, sreq)
		if err != nil {
			t.Fatalf("split %d: %v", i, err)
		}
		if r.Cost != q.Cost || r.Vig != q.Vig || r.PriceYesAfter != q.PriceYesAfter || r.MarketSeq != q.MarketSeq+1 {
			t.Fatalf("split %d: %+v, quoted %+v", i, r, q)
		}
	}
	req := core.TradeRequest{Account: a, Market: mkt, Side: core.Yes, Shares: money.Units(1)}
	q, err := h.e.QuoteTrade(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.buy(b, mkt, core.No, money.Units(1)); err != nil {
		t.Fatal(err)
	}
	before := h.e.State().Canonical()
	req.ExpectSeq, req.HasExpectSeq = q.MarketSeq, true
	if _, err := h.e.Trade(h.ctx, req); !errors.Is(err, core.ErrMarketMoved) {
		t.Fatalf("trade on a moved market: %v, want ErrMarketMoved", err)
	}
	split := core.SplitRequest{Account: a, Market: mkt, Amount: money.Units(1), ExpectSeq: q.MarketSeq, HasExpectSeq: true}
	if _, err := h.e.SplitMerge(h.ctx, split); !errors.Is(err, core.ErrMarketMoved) {
		t.Fatalf("split on a moved market: %v, want ErrMarketMoved", err)
	}
	if after := h.e.State().Canonical(); !reflect.DeepEqual(after, before) {
		t.Fatalf("refused operations changed the state: %s", firstDiff(after, before))
	}
	h.check()
}

// TestIdempotencyMemory measures the memory of a stored key: the heap
// after trades with a key (answers of the size transport stores for a
// trade, 80 bytes; keys of 51 bytes) less the heap after as many trades
// without one.
func TestIdempotencyMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("memory figure")
	}
	const trades = 4000
	h := newHarnessConfig(t, core.Config{CloseInterval: -1, UsageFlushInterval: -1,
		Idempotency: core.IdempotencyLimits{Keys: trades}})
	mkt := h.market("m", 0.05, 1000)
	measure := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	run := func(name string, keyed bool) int64 {
		a := h.account(name, core.RoleSpeculator, 100000)
		before := measure()
		for i := range trades {
			req := core.TradeRequest{Account: a, Market: mkt, Side: core.Side(i % 2), Shares: 1}
			if keyed {
				req.Idem = core.Idempotent{Key: fmt.Sprintf("bot-order-%08d-%s", i, uuid.NewString()), Fingerprint: [32]byte{byte(i)}}
				req.Answer = func(*core.TradeResult) []byte { return make([]byte, 80) }
			}
			if _, err := h.e.Trade(h.ctx, req); err != nil {
				t.Fatal(err)
			}
		}
		return measure() - before
	}
	plain := run("plain", false)
	keyed := run("keyed", true)
	perKey := float64(keyed-plain) / trades
	t.Logf("%.0f bytes per stored key (%d trades: %d bytes with keys, %d without)", perKey, trades, keyed, plain)
	ie := core.IdemEntry{Key: fmt.Sprintf("bot-order-%08d-%s", 1, uuid.NewString()), Time: time.Now().UnixNano(),
		Status: 200, Answer: make([]byte, 80)}
	without := len(record.Append(nil, &core.Record{Kind: core.KindImage, Accounts: []core.AccountChange{{}}}))
	with := len(record.Append(nil, &core.Record{Kind: core.KindImage, Accounts: []core.AccountChange{{Idem: []core.IdemEntry{ie}}}}))
	t.Logf("%d bytes per key in the log and in snapshots", with-without)
	if perKey > 2048 {
		t.Errorf("%.0f bytes per stored key of 451 bytes of key and answer", perKey)
	}
}

// TestTradeBatch: a batch's trades run in order, each on its own, across
// markets and currencies: refused items change nothing and do not stop the
// others; a sell of shares bought earlier in the same batch succeeds; the
// invariants hold and replay restores the state.
func TestTradeBatch(t *testing.T) {
	h, _ := custodyHarness(t)
	a := h.account("bot", core.RoleSpeculator, 100)
	h.link(a, walletA)
	h.deposit(a, 50, txHash(1))
	m1, m2 := h.market("m1", 0.05, 1000), h.market("m2", 0.1, 500)
	kp := func(m uuid.UUID, side core.Side, sell bool, shares money.Amount) core.BatchTrade {
		return core.BatchTrade{Req: core.TradeRequest{Account: a, Market: m, Currency: money.KP, Side: side, Sell: sell, Shares: shares}}
	}
	usdc := kp(m2, core.No, false, money.Units(5))
	usdc.Req.Currency = money.USDC
	slip := kp(m2, core.Yes, false, money.Units(1))
	slip.Req.Limit, slip.Req.HasLimit = 1, true
	items := []core.BatchTrade{
		kp(m1, core.Yes, false, money.Units(10)),
		usdc,
		kp(m1, core.No, true, money.Units(1)), // holds no "no" shares
		kp(uuid.New(), core.Yes, false, money.Units(1)),
		slip,
		kp(m1, core.Yes, true, money.Units(4)), // of the shares item 0 bought
		kp(m2, core.Yes, false, 0),
		kp(m2, core.Yes, false, money.Units(1000)), // more than the balance
	}
	kpBefore, usdcBefore := h.balance(a, money.KP), h.balance(a, money.USDC)
	h.e.TradeBatch(h.ctx, items)
	wantErr := []error{nil, nil, core.ErrInsufficientShares, core.ErrMarketNotFound, core.ErrSlippage, nil, nil, core.ErrInsufficientBalance}
	var fe *core.FieldError
	for i, it := range items {
		switch {
		case i == 6:
			if !errors.As(it.Err, &fe) {
				t.Errorf("item %d: %v, want a field error", i, it.Err)
			}
		case !errors.Is(it.Err, wantErr[i]) || (wantErr[i] == nil) != (it.Err == nil):
			t.Errorf("item %d: %v, want %v", i, it.Err, wantErr[i])
		}
	}
	kpWant := kpBefore - items[0].Result.Cost + items[5].Result.Cost
	if got := h.balance(a, money.KP); got != kpWant || items[5].Result.BalanceAfter != kpWant {
		t.Errorf("KP balance %s, want %s (item 5 answered %s)", got, kpWant, items[5].Result.BalanceAfter)
	}
	if got := h.balance(a, money.USDC); got != usdcBefore-items[1].Result.Cost {
		t.Errorf("USDC balance %s, want %s", got, usdcBefore-items[1].Result.Cost)
	}
	h.check()
	requireEqual(t, h.replayed(), h.e.State())
}

// TestFillsSurviveImages: an account's trades past the profile's 20 are
// kept, newest first, and come back whole from the log and from a
// snapshot image, the recent ones with their reasoning.
func TestFillsSurviveImages(t *testing.T) {
	h := newHarness(t)
	a := h.account("bot", core.RoleSpeculator, 1000)
	m1, m2 := h.market("m1", 0.05, 1000), h.market("m2", 0.05, 1000)
	var ids []uuid.UUID
	for i := range 30 {
		m := m1
		if i%3 == 0 {
			m = m2
		}
		r, err := h.e.Trade(h.ctx, core.TradeRequest{Account: a, Market: m, Side: core.Yes, Shares: money.Units(1), Reasoning: fmt.Sprint("why ", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.TradeID)
	}
	fills, total, err := h.e.Fills(h.ctx, a, uuid.Nil, 0, 100)
	if err != nil || total != 30 || fills[0].ID != ids[29] || fills[29].ID != ids[0] || fills[0].Reasoning != "" {
		t.Fatalf("Fills: %d of %d, %v", len(fills), total, err)
	}
	if fills, total, _ := h.e.Fills(h.ctx, a, m2, 2, 3); total != 10 || len(fills) != 3 || fills[0].ID != ids[21] {
		t.Fatalf("Fills of m2 from 2: %d of %d", len(fills), total)
	}
	if f, ok, err := h.e.Fill(h.ctx, a, ids[0]); !ok || err != nil || f.ID != ids[0] {
		t.Fatalf("Fill of the first trade: %v %v", f, ok)
	}
	if _, ok, _ := h.e.Fill(h.ctx, h.admin, ids[0]); ok {
		t.Fatal("another account's trade found")
	}
	requireEqual(t, h.replayed(), h.e.State())
	var images []*core.Record
	if _, err := h.e.State().Capture(1, func(r *core.Record) error { images = append(images, r.Clone()); return nil }); err != nil {
		t.Fatal(err)
	}
	recs := h.j.Records(t)
	loaded := fromImage(t, images, recs, uint64(len(recs)))
	requireEqual(t, loaded, h.e.State())
}

// TestIdempotencyReusedBatchKeyReplays: a batch key used again once it
// expired starts afresh live; replay, which keeps every entry, must start
// afresh too, or the new request's entries join the expired ones, and the
// engine's drop of expired keys at start (judged by the first entry) forgets
// a live key: a retry after the restart then runs its trades a second time.
// The key is reused with another body, and with the same one (whose items
// fare differently the second time).
func TestIdempotencyReusedBatchKeyReplays(t *testing.T) {
	for _, body := range []string{"second", "first"} {
		t.Run(body, func(t *testing.T) {
			lim := core.IdempotencyLimits{Retention: time.Hour, Keys: 10}
			h := newHarnessConfig(t, core.Config{CloseInterval: -1, UsageFlushInterval: -1, Idempotency: lim})
			a := h.account("bot", core.RoleSpeculator, 1000)
			mkt := h.market("m", 0.05, 1000)
			batch := func(body string, shares ...money.Amount) []core.BatchTrade {
				var items []core.BatchTrade
				for i, s := range shares {
					req := idemTrade(a, mkt, "k", body, s)
					req.Idem.Index = uint32(i)
					items = append(items, core.BatchTrade{Req: req})
				}
				h.e.TradeBatch(h.ctx, items)
				return items
			}
			// Item 1 is refused (more than the balance), item 0 stored.
			items := batch("first", money.Units(1), money.Units(100_000))
			if items[0].Err != nil || !errors.Is(items[1].Err, core.ErrInsufficientBalance) {
				t.Fatalf("first batch: %v, %v", items[0].Err, items[1].Err)
			}
			h.clock.Advance(2 * time.Hour) // the key expired
			// The key again: item 0 is refused, item 1 stored.
			items = batch(body, money.Units(100_000), money.Units(1))
			if !errors.Is(items[0].Err, core.ErrInsufficientBalance) || items[1].Err != nil {
				t.Fatalf("second batch: %v, %v", items[0].Err, items[1].Err)
			}
			live, err := h.e.Idempotent(h.ctx, a, "k")
			if err != nil || len(live) != 1 || live[0].Index != 1 {
				t.Fatalf("live entries of the key: %+v, %v; want item 1's", live, err)
			}
			h.clock.Advance(time.Minute)
			replayed := h.replayed()
			replayed.DropExpiredIdempotency(lim, h.clock.Now())
			h.e.State().DropExpiredIdempotency(lim, h.clock.Now())
			requireEqual(t, replayed, h.e.State())
		})
	}
}
