package bench

import (
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"marketd/bench/baseline"
	"marketd/core"
	"marketd/core/money"
	"marketd/internal/fstype"
	"marketd/wal"
)

// startLogOnly serves a fasthttp handler that makes one record durable per
// request and does nothing else: it appends a fixed trade record to a real
// log with fsync on, waits for its acknowledgement and answers baseline.NoopBody.
// No decoding, no authentication, no actor, no pricing: whatever a trade
// endpoint on this log does, it cannot be faster than this handler, so
// its throughput bounds the trade endpoint's ratio to the no-op's. The log
// is returned for its counters.
func startLogOnly(b *testing.B) (string, *wal.Log) {
	b.Helper()
	log, err := wal.Open(fstype.DiskTempDir(b), wal.Options{Logger: quietLogger})
	if err != nil {
		b.Fatalf("open log: %v", err)
	}
	log.Start()
	b.Cleanup(func() { // after the server's shutdown
		if err := log.Close(); err != nil {
			b.Errorf("close log: %v", err)
		}
	})
	rec := sampleTradeRecord()
	dones := sync.Pool{New: func() any { return make(chan error, 1) }}
	addr := serveHandler(b, "log-only", func(ctx *fasthttp.RequestCtx) {
		seq, err := log.Next()
		if err == nil {
			done := dones.Get().(chan error)
			log.Append(seq, rec, done)
			err = <-done
			dones.Put(done)
		}
		if err != nil {
			ctx.Error(`{"error":"log failed"}`, fasthttp.StatusInternalServerError)
			return
		}
		baseline.AnswerNoop(ctx)
	})
	return addr, log
}

// sampleTradeRecord is a record of a trade's shape and size (about 290
// bytes encoded): one account change with its balance, ledger entry,
// position and trade summary, and one market change with its book. The
// log checks nothing of its content.
func sampleTradeRecord() *core.Record {
	acct, mkt, trade := uuid.New(), uuid.New(), uuid.New()
	now := time.Now().UnixNano()
	cost := money.Amount(512_345)
	return &core.Record{
		Kind: core.KindTrade,
		Time: now,
		Accounts: []core.AccountChange{{
			ID:       acct,
			Prev:     1,
			Balances: []core.Balance{{Currency: money.KP, After: 999_487_655_000}},
			Ledger: []core.LedgerEntry{{Seq: 2, Currency: money.KP, Type: core.TxTradeBuy,
				Amount: -cost, BalanceAfter: 999_487_655_000, Ref: trade, Time: now}},
			Positions: []core.Position{{Market: mkt, Currency: money.KP,
				Shares: [core.NumSides]money.Amount{1_000_000, 0}, Cost: [core.NumSides]money.Amount{512_345, 0},
				PaidIn: 512_345}},
			Trades: []core.TradeSummary{{ID: trade, Market: mkt, Currency: money.KP, Side: core.Yes,
				Shares: 1_000_000, Cost: cost, Vig: 2_549, Time: now}},
		}},
		Markets: []core.MarketChange{{
			ID:   mkt,
			Prev: 1,
			Books: []core.Book{{Currency: money.KP,
				Q:       [core.NumSides]money.Amount{1_001_000_000, 1_000_000_000},
				Subsidy: 69_314_718, Collateral: 1_069_827_063, Volume: 512_345,
				VigTotal: 2_549, VigCreator: 1_275, VigHouse: 1_274, Trades: 1}},
		}},
	}
}
