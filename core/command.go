package core

import (
	"fmt"
	"slices"

	"github.com/google/uuid"
)

type opKind uint8

const (
	opTrade opKind = iota + 1
	opSplitMerge
	opSettle
	opClose
	opPropose
	opChallenge
	opVote
	opOracleDeadline
	// opPublish only wakes the goroutine for a reader waiting for a view
	// (view_publish.go); it has no caller waiting for an answer.
	opPublish
)

// command is one request to a market's goroutine. The caller fills the
// request part, the actor the result part before it hands the record to the
// journal; the journal's send on done orders the actor's writes before the
// caller's reads.
//
// The fields are in the order of a trade's use: with 1,024 callers in
// flight every line a trade's command touches is cold when its caller
// wakes (all the callers' commands and the rest of a trade's memory
// pass through the cache meanwhile), so what a trade touches is kept in
// five whole lines: op to applied, the result, then the request, bytes
// [56, 376) of the command, which start on a line because the runtime puts
// an 8-byte header before an object of this size (docs/PERFORMANCE.md,
// "A trade's working set over 1,024 accounts";
// TestCommandTradePartsInFiveLines). The settlement's and the oracle's
// requests fill the 56 bytes before them; the other ops' parts follow.
type command struct {
	settle SettleRequest
	oracle oracleRequest

	op opKind
	// acted is set by the actor when the command was due and it built a
	// record for it (a close, a deadline applied): CloseDue and OracleDue
	// count these, not the markets they found due, which another call may
	// have acted on first.
	acted bool
	acct  *account
	// idem is the idempotent request an oracle command answers, nil
	// when none (IdemCall).
	idem *IdemCall
	done chan error // room for one value; reused with the command
	// applied, when not nil, receives a value once the market's goroutine
	// has handled the command (applied it or refused it), before it is
	// durable: a batch sends its next trade then (TradeBatch).
	applied chan struct{}

	tradeRes TradeResult
	trade    TradeRequest

	split       SplitRequest
	splitRes    SplitResult
	settleRes   SettleResult
	proposalRes Proposal
}

// reset clears what the command's op used, keeping done, so that a pooled
// command holds no pointer into a past request and its next user finds it
// zero but for done. A trade's or a batch trade's command is cleared part
// by part: the caller and the market's goroutine write only op, acct, the
// request, the result and applied (batch.go), and zeroing the whole
// command (then 832 bytes) wrote 13 cache lines to clear those 4 or 5, 96
// instructions and 11 simulated first-level write misses a trade
// (docs/PERFORMANCE.md, "The trade's record on the market's goroutine").
// Every other op clears the whole command.
func (c *command) reset() {
	if c.op != opTrade {
		*c = command{done: c.done}
		return
	}
	c.op, c.acct, c.idem, c.acted, c.applied = 0, nil, nil, false, nil
	c.trade = TradeRequest{}
	c.tradeRes = TradeResult{}
}

func (e *Engine) handle(m *market, sc *scratch, c *command) {
	defer func() {
		if r := recover(); r != nil {
			answerPanic(m, c, r)
		}
	}()
	e.handleOp(m, sc, c)
}

// answerPanic answers c, whose handler panicked with r, and panics on: a
// panic there is a bug; the caller is answered instead of hung, and the
// process crashes loudly, since the state may be half-changed.
func answerPanic(m *market, c *command, r any) {
	c.done <- fmt.Errorf("BUG: market %s: %v", m.id, r)
	panic(r)
}

// handleOp runs c's handler. A market's goroutine calls it in its loop
// (Engine.serve), whose one deferred recovery covers every command, where
// handle defers one per command.
func (e *Engine) handleOp(m *market, sc *scratch, c *command) {
	switch c.op {
	case opTrade, opSplitMerge:
		e.changeBook(m, sc, c)
	case opSettle:
		e.answerAfterStakes(m, c, e.settle) // of a proposal the settlement cancelled
	case opClose:
		e.closeMarket(m, sc, c)
	case opPropose:
		e.propose(m, c)
	case opChallenge:
		e.challenge(m, c)
	case opVote:
		e.vote(m, c)
	case opOracleDeadline:
		e.answerAfterStakes(m, c, e.decide)
	case opPublish:
		// The goroutine publishes after the command (publishIfWanted).
	default:
		panic(fmt.Sprintf("BUG: unknown op %d", c.op))
	}
}

// lockAccounts locks accounts in the order of doc.go, "Lock order"
// (ascending ID), which every multi-account operation uses; it returns the
// function that unlocks them. Duplicates are locked once.
func lockAccounts(accts ...*account) (unlock func()) {
	if len(accts) == 1 {
		accts[0].mu.Lock()
		return accts[0].mu.Unlock
	}
	sorted := slices.Clone(accts)
	slices.SortFunc(sorted, func(a, b *account) int { return compareIDs(a.id, b.id) })
	sorted = slices.CompactFunc(sorted, func(a, b *account) bool { return a == b })
	for _, a := range sorted {
		a.mu.Lock()
	}
	return func() {
		for _, a := range sorted {
			a.mu.Unlock()
		}
	}
}

func compareIDs(a, b uuid.UUID) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
