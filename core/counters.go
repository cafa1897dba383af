package core

import (
	"fmt"
	"sync/atomic"

	"marketd/core/money"
)

// Counters are cumulative counts of what the engine did since it started
// (replay not included). Core has no metrics dependency: it keeps plain
// atomic counters, and a collector outside it reads them with
// Engine.Counters when it is scraped. Every trade pays two uncontended
// atomic adds on its market's own counters (its count by currency, side
// and type, which also counts its record, and its volume) and nothing else
// (docs/PERFORMANCE.md, "Instrumentation").
type Counters struct {
	// Trades counts trades by currency, side and type (index 0 buy,
	// 1 sell).
	Trades [money.NumCurrencies][NumSides][2]uint64
	// Volume sums the trades' costs by currency, in micro-units.
	Volume [money.NumCurrencies]money.Amount
	// Records counts the records committed, by Kind.
	Records [NumKinds]uint64
	// Busy counts the commands refused with ErrBusy: their market's inbox
	// stayed full until the caller's deadline.
	Busy uint64
}

// NumKinds bounds Kind values: arrays indexed by Kind have this length.
const NumKinds = 256

// engineCounters are the engine-wide counters; per-market ones live in
// marketCounters.
type engineCounters struct {
	records [NumKinds]atomic.Uint64
	busy    atomic.Uint64
}

// marketCounters are a market's trade counters. Only its actor adds to
// them (no cache line shared between markets on the trade path); any
// goroutine reads them.
type marketCounters struct {
	trades [money.NumCurrencies][NumSides][2]atomic.Uint64
	volume [money.NumCurrencies]atomic.Int64
	// bookRecords counts the records of the market's splits and merges, by
	// their kind's index in bookKinds: the engine-wide count of a kind
	// was a cache line that every market's goroutine wrote per trade. A
	// trade's record is counted by trades, one record per trade, which
	// spares a third atomic add per trade.
	bookRecords [len(bookKinds)]atomic.Uint64
}

// bookKinds are the kinds of a book change's record other than a trade,
// which its market counts (countBookRecord) rather than the engine.
var bookKinds = [...]Kind{KindSplit, KindMerge}

// countBookRecord counts a committed record of a split or a merge, of kind
// k. Runs on the market's goroutine.
func (c *marketCounters) countBookRecord(k Kind) {
	for i, b := range bookKinds {
		if b == k {
			c.bookRecords[i].Add(1)
			return
		}
	}
	panic(fmt.Sprintf("BUG: a split's or merge's record of kind %v", k))
}

// countTrade counts one applied trade, and so its record. Runs on the
// market's goroutine.
func (c *marketCounters) countTrade(cur money.Currency, side Side, sell bool, cost money.Amount) {
	t := 0
	if sell {
		t = 1
	}
	c.trades[cur][side][t].Add(1)
	c.volume[cur].Add(int64(cost))
}

// Counters returns the engine's counters. Each is read atomically; the set
// is not one consistent cut. It walks every market: call it at scrape
// time, not per request.
func (e *Engine) Counters() Counters {
	var out Counters
	for k := range out.Records {
		out.Records[k] = e.counters.records[k].Load()
	}
	out.Busy = e.counters.busy.Load()
	e.st.rangeMarkets(func(m *market) bool {
		for cur := range money.NumCurrencies {
			for side := range NumSides {
				for t := range 2 {
					n := m.counters.trades[cur][side][t].Load()
					out.Trades[cur][side][t] += n
					out.Records[KindTrade] += n
				}
			}
			out.Volume[cur] = addSigned(out.Volume[cur], money.Amount(m.counters.volume[cur].Load()))
		}
		for i, k := range bookKinds {
			out.Records[k] += m.counters.bookRecords[i].Load()
		}
		return true
	})
	return out
}

// InboxDepth returns the commands waiting in every market's inbox and the
// largest single queue, sampled now: the queues are read, not tracked per
// command.
func (e *Engine) InboxDepth() (total, largest int) {
	e.st.rangeMarkets(func(m *market) bool {
		// Every market is started (its inbox made) before it is added to
		// the map this walks. A resolved market's goroutine drops its
		// inbox holding sendMu (retire.go): read it under sendMu too.
		m.sendMu.RLock()
		n := len(m.inbox)
		m.sendMu.RUnlock()
		total += n
		largest = max(largest, n)
		return true
	})
	return total, largest
}
