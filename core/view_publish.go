package core

import (
	"sync"
	"sync/atomic"
)

// A trade, a split or a merge does not publish its market's view: it
// applies the change to the market and hands the record to the journal,
// and marks the view stale. The view is made on demand: a reader that finds
// it older than the last applied change (freshView) asks the market's
// goroutine for one and waits for it, and the goroutine makes one before
// any other command, whose handlers read it. So trades that no one reads
// in between share one view instead of allocating and copying one each,
// while a read after a trade's answer still sees the trade
// (docs/ARCHITECTURE.md, "Who owns what"; docs/PERFORMANCE.md, "The trade
// path's own CPU").

// viewLag is a market's state for publishing its view on demand.
type viewLag struct {
	// applied is the LSN of the last change applied to the market, stored
	// before its record is handed to the journal.
	applied atomic.Uint64
	// stale says the view is older than applied. Runs only on the market's
	// goroutine.
	stale bool
	// waiters counts the goroutines waiting in freshView; published is
	// closed (and dropped) by a publish that finds one, under mu.
	waiters   atomic.Int32
	mu        sync.Mutex
	published chan struct{}
}

// publishIfWanted publishes a stale view that a reader waits for.
// Runs on the market's goroutine, after each command.
func (m *market) publishIfWanted() {
	if m.lag.stale && m.lag.waiters.Load() > 0 {
		m.publish()
	}
}

// wakeViewWaiters wakes the goroutines waiting for a view. Called by
// publish after it stored the view: a waiter counts itself before it
// checks the view, so either it sees the new view or this sees it.
func (m *market) wakeViewWaiters() {
	if m.lag.waiters.Load() == 0 {
		return
	}
	m.lag.mu.Lock()
	if m.lag.published != nil {
		close(m.lag.published)
		m.lag.published = nil
	}
	m.lag.mu.Unlock()
}

// freshView returns the market's view once it covers every change applied
// when freshView was called. Never call it on the market's own goroutine,
// which would wait for itself; handlers there read m.view, which the
// goroutine publishes before every command but a book change.
func (m *market) freshView() *MarketView {
	target := m.lag.applied.Load()
	v := m.view.Load()
	if v.LSN >= target {
		return v
	}
	m.lag.waiters.Add(1)
	defer m.lag.waiters.Add(-1)
	for {
		m.lag.mu.Lock()
		if v = m.view.Load(); v.LSN >= target {
			m.lag.mu.Unlock()
			return v
		}
		if m.lag.published == nil {
			m.lag.published = make(chan struct{})
		}
		ch := m.lag.published
		m.lag.mu.Unlock()
		// m.eng is read only past a stale view: the engine had set it
		// before the goroutine applied the change that made it stale.
		m.eng.wakeMarket(m)
		<-ch
	}
}

// wakeMarket wakes a market goroutine waiting for a command, so that it
// sees a waiting reader (publishIfWanted). A full inbox needs no wake-up:
// the goroutine looks after each command. A closing engine needs none
// either: the goroutine publishes as it ends (run).
func (e *Engine) wakeMarket(m *market) {
	if e.enter() != nil {
		return
	}
	defer e.leave()
	m.sendMu.RLock()
	defer m.sendMu.RUnlock()
	if m.retired.Load() || m.inbox == nil {
		return
	}
	select {
	case m.inbox <- &command{op: opPublish}:
	default:
	}
}
