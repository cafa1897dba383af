package core

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"marketd/core/money"
)

// Limits of request fields (docs/API.md, "Conventions", "POST /api/markets",
// "POST /api/markets/trade").
const (
	// MaxAmount bounds every amount, share count and liquidity in a request.
	MaxAmount = money.Amount(1_000_000_000 * money.Scale)
	// MaxReasoningRunes bounds a trade's reasoning text.
	MaxReasoningRunes = 1000
	// DefaultInboxSize is the default bound of a market's command queue.
	DefaultInboxSize = 1024
	// DefaultInboxWait is how long a command waits by default for room in
	// a full market inbox before ErrBusy. A full inbox of 1,024 trades
	// drains in a few milliseconds when the market keeps up, so a second
	// of waiting means it does not; the client is better told to retry.
	DefaultInboxWait = time.Second
)

// Config holds the engine's settings; the zero value of each field means
// its stated default.
type Config struct {
	// Now returns the current time; default time.Now. Tests inject a clock.
	Now func() time.Time
	// InboxSize bounds each market's command queue; default DefaultInboxSize.
	InboxSize int
	// InboxWait bounds how long a command that finds its market's queue
	// full waits for room, then fails with ErrBusy; default
	// DefaultInboxWait. The wait is bounded here rather than by the
	// caller's context because fasthttp's request context ends only at
	// shutdown (docs/API.md, "Market busy").
	InboxWait time.Duration
	// CloseInterval is how often markets past their closing time are checked
	// and closed; default one second, negative disables the check (tests
	// call CloseDue).
	CloseInterval time.Duration
	// UsageFlushInterval is how often the API keys' usage is logged
	// (FlushKeyUsage); default DefaultUsageFlushInterval, negative disables
	// the flush (tests call FlushKeyUsage). Close logs the rest either way.
	UsageFlushInterval time.Duration
	// OracleBond is the KP an oracle proposal and its challenge each hold;
	// default DefaultOracleBond.
	OracleBond money.Amount
	// ChallengeWindow is how long a proposal may be challenged; default
	// DefaultChallengeWindow.
	ChallengeWindow time.Duration
	// VoteWindow is how long a challenged proposal takes votes; default
	// DefaultVoteWindow.
	VoteWindow time.Duration
	// VoteStake is the least stake of an oracle vote and the stake of a
	// vote that names none; default DefaultVoteStake. VoteQuorum is the
	// stake, and MinVoters the number of voters, a vote needs to decide;
	// defaults DefaultVoteQuorum and DefaultMinVoters (decisions of too
	// little weight escalate to the admin).
	VoteStake  money.Amount
	VoteQuorum money.Amount
	MinVoters  int
	// OracleInterval is how often proposals past their deadline are
	// decided (OracleDue); default one second (docs/API.md, "The oracle");
	// negative disables the loop and its run at start (tests call
	// OracleDue).
	OracleInterval time.Duration
	// Idempotency bounds the idempotency keys kept: their retention and
	// the live keys per account; zero fields take their defaults.
	Idempotency IdempotencyLimits
	// CustodyMode chooses who lets USDC in and out; default
	// CustodyModeManual (an admin confirms each deposit and marks each
	// withdrawal).
	CustodyMode CustodyMode
	// Custody confirms deposits and takes withdrawals in CustodyModeRecord
	// (custody.go); default a new RecordingCustody.
	Custody Custody
	// PurgeInterval is how often expired sessions and long-revoked keys
	// are purged (PurgeAuth); default DefaultPurgeInterval, negative
	// disables the loop (tests call PurgeAuth).
	PurgeInterval time.Duration
	// StepAccounts bounds the holders one record of a close or settlement
	// changes (steps.go); default DefaultStepAccounts. Tests make it small.
	StepAccounts int
}

// Engine runs the trading core over a State: one goroutine per market, fed
// through its inbox; account and auth changes made by the calling goroutine
// under the objects' locks; every change appended to the Journal, and
// answered only once the journal reports it durable.
type Engine struct {
	st  *State
	j   Journal
	cfg Config
	ids *idSource

	cmdPool sync.Pool // *command

	// gate is held shared by every operation for its whole duration and
	// exclusively by Close, so that Close finds no operation in flight and
	// can close the inboxes: no sender can then be left waiting on an
	// actor that has gone, and neither side needs a select to find out.
	// A trade, a split or a merge holds its market's sendMu shared instead
	// (enterMarket), which Close takes exclusively after the gate.
	gate sync.RWMutex
	// closed is set by Close holding the gate and the auth table's lock
	// exclusively; read under the gate, a market's sendMu or the auth
	// table's lock, each of which orders it.
	closed   atomic.Bool
	stopping chan struct{} // closed by Close, for the background loops
	wg       sync.WaitGroup

	// lastFlush makes Close log the keys' last usage once, and makes a
	// concurrent Close wait until it is logged.
	lastFlush sync.Once

	// board is the leaderboard's cached ranking (leaderboard.go).
	board leaderboardCache

	// counters are read by Counters (counters.go).
	counters engineCounters
}

// positiveOr returns v, or def when v is zero or negative: the default of
// a setting left out, and of one that has no meaning below zero.
func positiveOr[T ~int | ~int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// NewEngine takes ownership of st, recovered and checked, and starts one
// goroutine per market. The journal must accept Next and Append already.
func NewEngine(st *State, j Journal, cfg Config) *Engine {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.InboxSize = positiveOr(cfg.InboxSize, DefaultInboxSize)
	cfg.InboxWait = positiveOr(cfg.InboxWait, DefaultInboxWait)
	// An interval keeps a negative value: it turns its loop off (Config).
	cfg.CloseInterval = cmp.Or(cfg.CloseInterval, time.Second)
	cfg.PurgeInterval = cmp.Or(cfg.PurgeInterval, DefaultPurgeInterval)
	cfg.StepAccounts = positiveOr(cfg.StepAccounts, DefaultStepAccounts)
	cfg.UsageFlushInterval = cmp.Or(cfg.UsageFlushInterval, DefaultUsageFlushInterval)
	cfg.oracleDefaults()
	cfg.Idempotency = cfg.Idempotency.withDefaults()
	if cfg.Custody == nil {
		cfg.Custody = NewRecordingCustody()
	}
	e := &Engine{st: st, j: j, cfg: cfg, ids: newIDSource(), stopping: make(chan struct{})}
	e.cmdPool.New = func() any { return newCommand() }
	st.publishDirty()
	e.rebuildHolders()
	st.idemLimits = cfg.Idempotency
	st.DropExpiredIdempotency(cfg.Idempotency, cfg.Now())
	e.requeueWithdrawals()
	st.rangeMarkets(func(m *market) bool {
		// A resolved market whose vote stakes a restart left unpaid gets
		// its goroutine until they are paid (resume), then retires.
		if m.info.Status == StatusResolved && !m.stakesDue() {
			m.retireIdle()
		} else {
			e.start(m)
		}
		return true
	})
	if cfg.CloseInterval > 0 {
		e.wg.Add(1)
		go e.every(e.cfg.CloseInterval, false, func(ctx context.Context) { _, _ = e.CloseDue(ctx) })
	}
	if cfg.UsageFlushInterval > 0 {
		e.wg.Add(1)
		go e.every(e.cfg.UsageFlushInterval, false, func(ctx context.Context) { _, _ = e.FlushKeyUsage(ctx) })
	}
	if cfg.PurgeInterval > 0 {
		e.wg.Add(1)
		go e.purgeLoop()
	}
	if cfg.OracleInterval > 0 {
		// At start too, for the deadlines that passed while it was down.
		e.wg.Add(1)
		go e.every(e.cfg.OracleInterval, true, func(ctx context.Context) { _, _ = e.OracleDue(ctx) })
	}
	return e
}

// Close waits for the operations in flight to be answered, stops the
// market goroutines and the background loops, then logs the usage of API
// keys not logged yet and waits for it to be durable, so that a graceful
// stop loses no count; later operations get ErrClosed. The journal is the
// caller's to close, after Close returns.
func (e *Engine) Close() {
	e.gate.Lock()
	if !e.closed.Load() {
		// Set under the auth table's lock too, which admits the key
		// counts (AuthenticateKey): those in flight end before the last
		// flush, later ones find closed.
		e.st.auth.mu.Lock()
		e.closed.Store(true)
		e.st.auth.mu.Unlock()
		close(e.stopping)
		// Each market's lock waits for the trades, splits and merges in
		// flight on it (enterMarket); those that come later find closed.
		e.st.rangeMarkets(func(m *market) bool {
			m.sendMu.Lock()
			if m.inbox != nil {
				close(m.inbox)
			}
			m.sendMu.Unlock()
			return true
		})
	}
	e.gate.Unlock()
	e.wg.Wait()
	e.lastFlush.Do(func() {
		// Only a failed journal makes this fail, and the journal reports
		// its failure to its owner too; the counts then lag as after a
		// crash, which docs/API.md, "Authentication" allows.
		_, _ = e.flushUsage(context.Background(), maxUsageKeys)
	})
}

// enter admits an operation, or refuses it once Close has begun; an
// admitted operation must call leave when answered.
func (e *Engine) enter() error {
	e.gate.RLock()
	if e.closed.Load() {
		e.gate.RUnlock()
		return ErrClosed
	}
	return nil
}

func (e *Engine) leave() { e.gate.RUnlock() }

// enterMarket admits a trade, a split or a merge on market m, or refuses it
// once Close has begun; an admitted one must call m.sendMu.RUnlock when
// answered. It holds m's sendMu shared in place of the gate, for the whole
// operation: Close takes every market's sendMu exclusively once it has
// closed the engine, so it waits for these as for the gate's operations.
// The gate's read lock wrote one cache line that every caller on both
// cores shared, twice per trade; sendMu's line is the market's own
// (docs/PERFORMANCE.md, "The hop to the market's goroutine"). Its place in
// the lock order is the gate's (doc.go, "Lock order").
func (e *Engine) enterMarket(m *market) error {
	m.sendMu.RLock()
	if e.closed.Load() {
		m.sendMu.RUnlock()
		return ErrClosed
	}
	return nil
}

// enterAccount admits an operation of account id (enter) and finds the
// account, which must not be the house's. The caller must call leave when
// answered, only when err is nil.
func (e *Engine) enterAccount(id uuid.UUID) (*account, error) {
	if err := e.enter(); err != nil {
		return nil, err
	}
	a := e.st.account(id)
	if a == nil || id == HouseID {
		e.leave()
		return nil, ErrAccountNotFound
	}
	return a, nil
}

// refuse returns err once the change at lsn it rests on is durable, or the
// journal's error if that change never will be.
func (e *Engine) refuse(ctx context.Context, lsn uint64, err error) error {
	if lsn == 0 {
		return err
	}
	if werr := e.j.WaitDurable(ctx, lsn); werr != nil {
		return werr
	}
	return err
}

// State returns the state the engine runs on, for the snapshot capture and
// the invariant checker.
func (e *Engine) State() *State { return e.st }

func (e *Engine) now() int64 { return e.cfg.Now().UnixNano() }

// rebuildHolders derives every market's holder set from the accounts'
// positions: derived state is not logged.
func (e *Engine) rebuildHolders() {
	e.st.eachAccountLocked(0, 1, func(a *account) {
		for p := range a.refs().positions.all() {
			if m := e.st.market(p.Market); m != nil {
				m.holders[a.id] = struct{}{}
			}
		}
	})
}

// start runs a market's goroutine. The market must be published.
func (e *Engine) start(m *market) {
	m.inbox = make(chan *command, e.cfg.InboxSize)
	m.eng = e
	e.wg.Add(1)
	go e.run(m)
}

// run is a market's goroutine: it resumes a close or settlement a restart
// found in progress, then handles commands one at a time until Close
// closes its inbox, which happens only once no operation is in flight, or
// until the market is resolved (retire.go).
func (e *Engine) run(m *market) {
	defer e.wg.Done()
	sc := &scratch{ids: idBuffer{size: marketIDBufferBytes}}
	e.resume(m)
	resolved := e.serve(m, sc)
	if m.lag.stale {
		m.publish()
	}
	if resolved {
		e.retire(m, sc)
	}
}

// serve handles m's commands one at a time until Close closes its inbox
// (false) or the market is resolved (true). A panic in a handler answers
// its command (answerPanic) through the one recovery deferred here, not
// one deferred per command (handle), whose closure called recover on
// every return: about 40 instructions a trade (docs/PERFORMANCE.md, "The
// actor's own work per trade").
func (e *Engine) serve(m *market, sc *scratch) (resolved bool) {
	var cur *command // the command being handled, for the recovery
	defer func() {
		if cur != nil {
			if r := recover(); r != nil {
				answerPanic(m, cur, r)
			}
		}
	}()
	for m.info.Status != StatusResolved {
		c, ok := <-m.inbox
		if !ok {
			return false
		}
		// Every handler but a book change's reads the view
		// (view_publish.go).
		if m.lag.stale && c.op != opTrade && c.op != opSplitMerge {
			m.publish()
		}
		// c is the caller's again once handled: read applied first.
		applied := c.applied
		cur = c
		e.handleOp(m, sc, c)
		cur = nil
		if applied != nil {
			applied <- struct{}{}
		}
		m.publishIfWanted()
	}
	return true
}

// submit hands a command to a market's goroutine and waits for its outcome:
// an error found by the actor, or the journal's answer once the record is
// durable. The wait for room in the inbox is bounded by InboxWait and the
// context, whichever ends first (ErrBusy); once a command is accepted its
// outcome is always awaited, so that no caller is told of a failure for a
// change that then becomes durable.
func (e *Engine) submit(ctx context.Context, m *market, c *command) error {
	if err := e.enter(); err != nil {
		return err
	}
	defer e.leave()
	m.sendMu.RLock()
	sent, err := e.dispatch(ctx, m, c)
	m.sendMu.RUnlock()
	if !sent {
		return err
	}
	return <-c.done
}

// dispatch hands c to m's goroutine (send), or answers it on the caller's
// goroutine when m is retired (handleRetired). It reports whether c was
// sent, its outcome then to be received from c.done; else err is the
// outcome. Caller holds m.sendMu, shared.
func (e *Engine) dispatch(ctx context.Context, m *market, c *command) (sent bool, err error) {
	if m.retired.Load() {
		return false, e.handleRetired(m, c)
	}
	// send's first try, here: a trade's caller side saves a call and the
	// frame of the timer's wait, which a full inbox alone needs.
	select {
	case m.inbox <- c:
		return true, nil
	default:
	}
	if err := e.waitForRoom(ctx, m, c); err != nil {
		return false, err
	}
	return true, nil
}

// send puts c in m's inbox, waiting for room at most InboxWait or until ctx
// is done (ErrBusy). Caller holds m.sendMu, shared.
func (e *Engine) send(ctx context.Context, m *market, c *command) error {
	select {
	case m.inbox <- c:
		return nil
	default:
	}
	return e.waitForRoom(ctx, m, c)
}

// waitForRoom is send once m's inbox was found full: only then is a timer
// made. Caller holds m.sendMu, shared.
func (e *Engine) waitForRoom(ctx context.Context, m *market, c *command) error {
	t := time.NewTimer(e.cfg.InboxWait)
	defer t.Stop()
	select {
	case m.inbox <- c:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	e.counters.busy.Add(1)
	return ErrBusy
}

// refuseOn returns a market command's refusal err once the market's and
// the account's last changes, on which it may rest, are durable: a trade
// refused for a balance that a trade still being synced spent must not be
// answered before that trade is, or a crash could leave the refusal
// standing on a change that never happened. ErrBusy and ErrClosed rest on
// nothing; the journal's own failure is returned as it is.
func (e *Engine) refuseOn(ctx context.Context, m *market, a *account, err error) error {
	if err == nil || errors.Is(err, ErrBusy) || errors.Is(err, ErrClosed) {
		return err
	}
	// The market's last applied change, published or not: the view may
	// lag behind it (view_publish.go).
	lsn := m.lag.applied.Load()
	if a != nil {
		lsn = max(lsn, e.accountLSN(a.id))
	}
	return e.refuse(ctx, lsn, err)
}

// newCommand makes a command for the pool, with its done channel.
func newCommand() *command { return &command{done: make(chan error, 1)} }

func (e *Engine) getCommand(op opKind) *command {
	c := e.cmdPool.Get().(*command)
	c.op = op
	return c
}

// putCommand returns a command whose outcome was received.
func (e *Engine) putCommand(c *command) {
	c.reset()
	e.cmdPool.Put(c)
}
