package core

import (
	"context"
	"time"
)

// every runs task every interval until the engine stops (the closes, the
// key usage flush and the oracle's deadlines), each run bounded by a
// context of one interval; with atStart, once before the first tick. The
// tasks' errors are dropped on purpose: what a run leaves undone is the
// next run's (a busy market is closed or decided on the next tick, usage
// left unlogged stays counted), and the only other failure is the
// journal's, which every later operation reports and its owner sees.
func (e *Engine) every(interval time.Duration, atStart bool, task func(context.Context)) {
	defer e.wg.Done()
	run := func() {
		ctx, cancel := context.WithTimeout(context.Background(), interval)
		defer cancel()
		task(ctx)
	}
	if atStart {
		run()
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			run()
		case <-e.stopping:
			return
		}
	}
}
