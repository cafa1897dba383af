package core

// A resolved market never changes again, so it keeps no goroutine and no
// inbox: a popular venue accumulates resolved markets without bound, and
// each goroutine with its inbox held about 10 KiB. Its view stays
// published, so every read works as before; a command to it is answered on
// the caller's goroutine (handleRetired) with the refusal its actor would
// have given.

// retire ends the goroutine of a market that has just been resolved: it
// marks the market retired, answers what is still in its inbox, and drops
// the inbox. Runs on the market's goroutine, which returns after it.
func (e *Engine) retire(m *market, sc *scratch) {
	m.retired.Store(true)
	// Senders that found the market not retired hold sendMu shared until
	// their send is done, a trade, a split or a merge until it is answered
	// (once durable); a sender may wait for room in a full inbox, so keep
	// draining until the lock is ours. The lock is asked for by a
	// goroutine of its own: a waiting Lock keeps new senders out, where
	// trying it in turn with the draining would wait for an instant with no
	// sender at all, which a steady flow of commands to the market (each
	// answered on its caller's goroutine once it sees retired) need never
	// leave.
	locked := make(chan struct{})
	go func() {
		m.sendMu.Lock()
		close(locked)
	}()
	in := m.inbox
	for waiting := true; waiting; {
		select {
		case <-locked:
			waiting = false
		case c, ok := <-in:
			if !ok {
				in = nil // closed by Engine.Close: nothing more to drain
				continue
			}
			e.handleDrained(m, sc, c)
		}
	}
	for e.drainOne(m, sc) {
	}
	m.inbox = nil
	// Derived lookups only the actor used.
	m.holders, m.voted = nil, nil
	m.sendMu.Unlock()
}

// retireIdle marks a market found resolved at start retired, without a
// goroutine ever started for it.
func (m *market) retireIdle() {
	m.holders, m.voted = nil, nil
	m.retired.Store(true)
}

// drainOne answers one command waiting in m's inbox, if any; it reports
// whether it found one.
func (e *Engine) drainOne(m *market, sc *scratch) bool {
	select {
	case c, ok := <-m.inbox:
		if !ok {
			return false // closed by Engine.Close
		}
		e.handleDrained(m, sc, c)
		return true
	default:
		return false
	}
}

// handleDrained answers c, taken from m's inbox while m retires.
func (e *Engine) handleDrained(m *market, sc *scratch, c *command) {
	applied := c.applied // c is the caller's again once handled
	e.handle(m, sc, c)
	if applied != nil {
		applied <- struct{}{}
	}
}

// handleRetired answers a command to a retired market on the caller's
// goroutine. The market's actor state is frozen: its actor wrote it last
// before retire's store of retired, which the caller's load of retired
// orders before this read; what retire writes after that (the inbox, the
// derived lookups) no command to a resolved market reads, since none gets
// past its checks of the market's status. Every operation refuses or
// does nothing there without writing the state, so the actor's own code
// gives the answer, here and in retire's draining alike.
func (e *Engine) handleRetired(m *market, c *command) error {
	e.handle(m, &scratch{}, c)
	return <-c.done
}
