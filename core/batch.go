package core

import "context"

// MaxBatchTrades bounds the trades of one batch (docs/API.md, "POST
// /api/markets/trades").
const MaxBatchTrades = 20

// BatchTrade is one trade of a batch and, once TradeBatch returns, its
// outcome: Result when Err is nil.
type BatchTrade struct {
	Req    TradeRequest
	Result TradeResult
	Err    error
}

// TradeBatch runs the trades of a batch in order, each on its own: a
// refused trade does not stop the others. Each trade is applied by its
// market's goroutine before the next is sent, so that the trades of one
// account change its balance in the batch's order, across markets too;
// none waits for the disk before the next is sent, so that the records of a
// batch that arrive together share one commit. It returns once every
// applied trade is durable.
func (e *Engine) TradeBatch(ctx context.Context, items []BatchTrade) {
	if len(items) > MaxBatchTrades {
		panic("BUG: a batch of more than MaxBatchTrades trades")
	}
	if err := e.enter(); err != nil {
		for i := range items {
			items[i].Err = err
		}
		return
	}
	defer e.leave()
	type sent struct {
		c *command
		m *market
		a *account
	}
	var pending [MaxBatchTrades]sent
	applied := make(chan struct{}, 1)
	for i := range items {
		it := &items[i]
		if it.Err = it.Req.validate(); it.Err != nil {
			continue
		}
		m, a, err := e.marketAndTrader(it.Req.Market, it.Req.Account)
		if err == nil {
			err = e.refuseInSteps(ctx, m)
		}
		if err != nil {
			it.Err = err
			continue
		}
		c := e.getCommand(opTrade)
		c.acct, c.trade, c.applied = a, it.Req, applied
		if err := e.sendApplied(ctx, m, c); err != nil {
			e.putCommand(c)
			it.Err = err
			continue
		}
		pending[i] = sent{c, m, a}
	}
	for i := range items {
		p := pending[i]
		if p.c == nil {
			continue
		}
		err := <-p.c.done
		items[i].Result = p.c.tradeRes
		e.putCommand(p.c)
		if err != nil {
			items[i].Err = e.refuseOn(ctx, p.m, p.a, err)
		}
	}
}

// sendApplied hands c to m's goroutine and waits until it has been
// applied or refused, not until it is durable: c.done then receives its
// outcome. The caller holds the gate (enter).
func (e *Engine) sendApplied(ctx context.Context, m *market, c *command) error {
	m.sendMu.RLock()
	if m.retired.Load() {
		m.sendMu.RUnlock()
		// A retired market is handled on the caller's goroutine, which is
		// where the outcome arrives: put it back for the caller's wait.
		err := e.handleRetired(m, c)
		c.done <- err
		return nil
	}
	err := e.send(ctx, m, c)
	m.sendMu.RUnlock()
	if err != nil {
		return err
	}
	<-c.applied
	return nil
}
