package core

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"marketd/core/money"
)

// Bounded steps (docs/ARCHITECTURE.md). A close notifies every holder of a
// market and a settlement pays every holder; a popular market has more
// holders than one record can hold, and a record over the log's limit
// cannot be written. So both walk the holders in ascending ID order, at
// most Config.StepAccounts of them per record, each record carrying the
// market's after-image with its Step: the status (closing, settling), the
// last holder done and what the rest of the walk needs. The market's
// goroutine runs the steps one after the other; a restart finds the
// market in closing or settling and resumes after the cursor (resume), so
// that every holder is done exactly once.
//
// The walk is the mechanism for any work over an unbounded set of accounts
// at close or settlement: runSettlement calls settleStep once per chunk of
// holders, and a new payout over another set of accounts (oracle vote
// stakes, say) goes in settleStep as another chunked pass with its own
// cursor in Step, never in one record.

// DefaultStepAccounts is the default bound of the holders one step record
// changes. Each holder's change is about 300 bytes (a payout, a closed
// position and a note per currency), its referrer's as much again, so a
// step stays near 3 MiB, far inside the log's record limit; and every
// account of a step is locked while it is built, so a step is short.
const DefaultStepAccounts = 4096

// holdersAfter returns the market's holders whose ID is above cursor, in
// ascending ID order. Runs on the market's goroutine.
func (e *Engine) holdersAfter(m *market, cursor uuid.UUID) []*account {
	out := make([]*account, 0, len(m.holders))
	for id := range m.holders {
		if compareIDs(id, cursor) > 0 {
			out = append(out, e.st.account(id))
		}
	}
	slices.SortFunc(out, func(a, b *account) int { return compareIDs(a.id, b.id) })
	return out
}

// resume runs the close, settlement or notification that a restart found
// in progress to its end. Nobody waits for it: whoever asked was answered by the crash.
// Runs on the market's goroutine, before its first command.
func (e *Engine) resume(m *market) {
	switch m.info.Status {
	case StatusSettling:
		c := &command{op: opSettle, done: make(chan error, 1)}
		e.runSettlement(m, m.info, nil, c)
	default:
		if m.info.Step.Kind != 0 { // a close or an oracle notification
			done := make(chan error, 1)
			e.runNotify(m, m.info, done)
		}
	}
	_ = e.payStakes(m) // nobody waits, and a failed log stops the engine
}

// runNotify commits the steps of a walk that notifies every holder of
// info.Step.Note, from info (the market's after-image with its Step) on:
// a close (status closing, closed at the last step) or an oracle proposal
// or challenge (its status unchanged). done receives the outcome of the
// last record, or the first error. The proposer of the proposal
// info.Step.Oracle, notified by a challenge's first record, is skipped.
// Runs on the market's goroutine.
func (e *Engine) runNotify(m *market, info MarketInfo, done chan<- error) {
	holders := e.holdersAfter(m, info.Step.Cursor)
	note := info.Step.Note
	skip := uuid.Nil // the proposer a challenge's first record notified
	if p, ok := m.findProposal(info.Step.Oracle); ok && info.Step.Oracle != uuid.Nil {
		skip = p.Proposer
	}
	for {
		n := min(len(holders), e.cfg.StepAccounts)
		chunk := holders[:n]
		holders = holders[n:]
		last := len(holders) == 0
		now := e.now()
		st := &settlement{byID: make(map[uuid.UUID]int, len(chunk)), now: now}
		st.rec = Record{Kind: info.Step.Kind, Time: now}
		mc := st.addMarket(m)
		if last {
			if info.Status == StatusClosing {
				info.Status = StatusClosed
			}
			info.Step = Step{}
		} else {
			info.Step.Cursor = chunk[n-1].id
		}
		after := info
		mc.Info = &after
		unlock := func() {}
		if n > 0 {
			unlock = lockAccounts(chunk...)
		}
		for _, h := range chunk {
			// As notifyAll: nothing for the house or who turned them off.
			if h.id != skip && h.id != HouseID && !h.info.Settings.NotificationsOff {
				st.notify(h, st.change(h), note)
			}
		}
		if last {
			e.commit(&st.pending, done, nil)
			unlock()
			return
		}
		stepDone := make(chan error, 1)
		ok := e.commit(&st.pending, stepDone, nil)
		unlock()
		if !ok {
			done <- <-stepDone
			return
		}
	}
}

// firstHolders returns the market's first Config.StepAccounts holders in
// ID order, which an oracle proposal or challenge notifies in its own
// record, and whether more remain for runNotify. Runs on the market's
// goroutine.
func (e *Engine) firstHolders(m *market) (first []*account, more bool) {
	holders := e.holdersAfter(m, uuid.Nil)
	n := min(len(holders), e.cfg.StepAccounts)
	return holders[:n], n < len(holders)
}

// continueNotify gives an oracle record whose first holders were
// notified of note the market's after-image with the Step of the rest,
// and returns it for runNotify. oracle names the proposal whose parties
// the record notified, to be skipped; Nil: none.
func continueNotify(m *market, st *settlement, first []*account, kind Kind, note Note, oracle uuid.UUID) MarketInfo {
	info := m.info
	info.Step = Step{Kind: kind, Cursor: first[len(first)-1].id, Oracle: oracle, Note: note}
	after := info
	st.rec.Markets[0].Info = &after
	return info
}

// runSettlement commits the settlement's steps from info, its after-image
// in status settling, until the market is resolved; pc, when not nil, is
// applied in the first record, and so is the answer to c.idem, when not
// nil: that record makes the settlement durable and resumable, so a
// repeat after a crash in the middle is answered from it while the resume
// finishes the steps (docs/API.md, "Idempotent requests"). c.settleRes
// holds the answer (settleAnswer) and adds up the vig the steps pay, and
// c.done receives the outcome of the last record, or the first error. Runs
// on the market's goroutine.
func (e *Engine) runSettlement(m *market, info MarketInfo, pc *proposalClose, c *command) {
	idem := c.idem
	holders := e.holdersAfter(m, info.Step.Cursor)
	var parties []uuid.UUID // an oracle proposal's proposer and challenger
	if p, ok := m.findProposal(info.Step.Oracle); ok && info.Step.Oracle != uuid.Nil {
		parties = []uuid.UUID{p.Proposer, p.Challenger}
	}
	for {
		n := min(len(holders), e.cfg.StepAccounts)
		chunk := holders[:n]
		holders = holders[n:]
		last := len(holders) == 0
		stepDone := c.done
		if !last {
			stepDone = make(chan error, 1)
		}
		if !e.settleStep(m, &info, pc, idem, parties, chunk, last, c, stepDone) {
			if !last {
				c.done <- <-stepDone
			}
			return
		}
		if last {
			return
		}
		pc, idem = nil, nil
	}
}

// settleStep builds and commits one step of a settlement: the payouts of
// chunk, their referrers' vig, pc's bonds and notifications when not nil,
// the answer to idem in the caller's change when not nil, and in the last
// step the creator's vig and the house's return. It reports whether the
// record was committed; otherwise done has the error. Runs on the
// market's goroutine.
func (e *Engine) settleStep(m *market, info *MarketInfo, pc *proposalClose, idem *IdemCall, parties []uuid.UUID, chunk []*account, last bool, c *command, done chan<- error) bool {
	// Only this goroutine changes positions in this market, so the
	// referrers read here stay valid once every account is locked below.
	lockSet := slices.Clone(chunk)
	for _, h := range chunk {
		h.mu.Lock()
		for cur := range money.NumCurrencies {
			if p, ok := h.position(m.id, money.Currency(cur)); ok && p.Referrer != uuid.Nil {
				lockSet = append(lockSet, e.st.account(p.Referrer))
			}
		}
		h.mu.Unlock()
	}
	lockSet = append(lockSet, pc.accounts(e.st)...)
	if last {
		lockSet = append(lockSet, e.st.account(HouseID), e.st.account(m.info.Creator))
	}
	var caller *account
	if idem != nil {
		// Settle checked that the account exists; accounts are never
		// removed.
		caller = e.st.account(idem.Account)
		lockSet = append(lockSet, caller)
	}
	unlock := func() {}
	if len(lockSet) > 0 {
		unlock = lockAccounts(lockSet...)
	}
	defer unlock()

	now := e.now()
	st := &settlement{byID: make(map[uuid.UUID]int, len(lockSet)), now: now, ref: m.id}
	st.rec = Record{Kind: info.Step.Kind, Time: now}
	mc := st.addMarket(m)
	for cur := range money.NumCurrencies {
		if m.open[cur] {
			book := e.settleBook(st, m, info, chunk, money.Currency(cur), last, &c.settleRes)
			mc.Books = append(mc.Books, book)
		}
	}
	if oracle := info.Step.Oracle; oracle != uuid.Nil {
		// The proposal's parties hear of it once, from its close (pc).
		for _, h := range chunk {
			if !slices.Contains(parties, h.id) {
				st.notify(h, st.change(h), Note{Kind: NoteOracleResolved, Time: now, Market: m.id,
					Ref: oracle, Outcome: info.Outcome})
			}
		}
	}
	if last {
		info.Status, info.Step = StatusResolved, Step{}
	} else {
		info.Step.Cursor = chunk[len(chunk)-1].id
	}
	after := *info
	mc.Info = &after
	pc.apply(e, st, mc, nil)
	if caller != nil {
		// The caller joins the record with no change but the entry when
		// it plays no other part; the answer leaves out the vig, which
		// the steps are still to pay.
		st.change(caller)
		st.pending.idem = idem
		st.pending.outcome = SettleResult{Market: m.id, Outcome: info.Outcome,
			PositionsPaid: c.settleRes.PositionsPaid, TotalPaid: c.settleRes.TotalPaid}
	}
	if st.s.err != nil {
		done <- fmt.Errorf("core: settle: %w", st.s.err)
		return false
	}
	if !e.commit(&st.pending, done, nil) {
		return false
	}
	for _, h := range chunk {
		delete(m.holders, h.id)
	}
	return true
}

// refuseInSteps refuses a trade, split or merge at once, once durable, on
// a market in the middle of a close, a settlement or an oracle
// notification: its goroutine is busy
// with the steps, and the command would wait for all of them only to be
// refused then.
func (e *Engine) refuseInSteps(ctx context.Context, m *market) error {
	v := m.view.Load()
	// An oracle notification's Step runs only past the closing time. A
	// walk in progress has its Kind set (resume reads it the same way);
	// comparing the whole Step with Step{} cost about 250 instructions per
	// trade in the runtime's generic compare of its arrays and Note.
	if s := v.Info.Status; s == StatusClosing || s == StatusSettling || v.Info.Step.Kind != 0 {
		return e.refuse(ctx, v.LSN, ErrMarketNotActive)
	}
	return nil
}
