package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// heldJournal is an in-memory core.Journal whose durability a test holds
// back: while held, appended records are kept but not acknowledged, and
// WaitDurable waits, as a real log does during a slow fsync. With a gate,
// Next blocks until the gate is opened, so that a market goroutine can be
// stalled inside a command.
type heldJournal struct {
	mu      sync.Mutex
	cond    sync.Cond // broadcast on every change below
	next    uint64
	recs    map[uint64]*core.Record
	dones   map[uint64]chan<- error
	durable uint64
	held    bool
	waiters int           // calls inside WaitDurable
	gate    chan struct{} // when not nil, Next waits for it to close
	atGate  int           // calls of Next waiting at the gate
}

func newHeldJournal() *heldJournal {
	j := &heldJournal{recs: make(map[uint64]*core.Record), dones: make(map[uint64]chan<- error)}
	j.cond.L = &j.mu
	return j
}

func (j *heldJournal) Next() (uint64, error) {
	j.mu.Lock()
	gate := j.gate
	if gate != nil {
		j.atGate++
		j.cond.Broadcast()
	}
	j.mu.Unlock()
	if gate != nil {
		<-gate
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if gate != nil {
		j.atGate--
	}
	j.next++
	return j.next, nil
}

func (j *heldJournal) Append(seq uint64, rec *core.Record, done chan<- error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.recs[seq], j.dones[seq] = rec.Clone(), done
	j.advance()
}

// advance acknowledges every record up to the first gap unless held.
// j.mu must be held.
func (j *heldJournal) advance() {
	for !j.held && j.recs[j.durable+1] != nil {
		j.durable++
		j.dones[j.durable] <- nil
		delete(j.dones, j.durable)
	}
	j.cond.Broadcast()
}

func (j *heldJournal) WaitDurable(_ context.Context, seq uint64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.waiters++
	j.cond.Broadcast()
	for j.durable < seq {
		j.cond.Wait()
	}
	j.waiters--
	return nil
}

// hold stops acknowledging; release acknowledges what was held and
// resumes.
func (j *heldJournal) hold() {
	j.mu.Lock()
	j.held = true
	j.mu.Unlock()
}

func (j *heldJournal) release() {
	j.mu.Lock()
	j.held = false
	j.advance()
	j.mu.Unlock()
}

// appended reports the number of records handed over so far.
func (j *heldJournal) appended() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.recs)
}

// waitUntil blocks until cond, called with the journal locked, holds.
func (j *heldJournal) waitUntil(cond func() bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for !cond() {
		j.cond.Wait()
	}
}

type heldHarness struct {
	*harness
	hj *heldJournal
}

func newHeldHarness(t *testing.T, cfg core.Config) *heldHarness {
	t.Helper()
	hj := newHeldJournal()
	h := &harness{t: t, ctx: context.Background(), clock: newClock()}
	cfg.Now = h.clock.Now
	cfg.CloseInterval, cfg.UsageFlushInterval, cfg.OracleInterval = -1, -1, -1
	h.e = core.NewEngine(core.NewState(), hj, cfg)
	t.Cleanup(h.e.Close)
	h.admin = h.account("admin", core.RoleAdmin, 0)
	return &heldHarness{harness: h, hj: hj}
}

// answeredBeforeDurable runs refusal while the journal holds back the
// change it rests on, and reports whether it answered before that change
// was durable. It returns refusal's error once released.
func (h *heldHarness) answeredBeforeDurable(refusal func() error) (early bool, err error) {
	errc := make(chan error, 1)
	go func() { errc <- refusal() }()
	// Either the refusal answers at once (early), or it waits on the
	// journal: both are seen without a timer.
	var got error
	returned := false
	done := make(chan struct{})
	go func() {
		got = <-errc
		h.hj.mu.Lock()
		returned = true
		h.hj.cond.Broadcast()
		h.hj.mu.Unlock()
		close(done)
	}()
	h.hj.waitUntil(func() bool { return returned || h.hj.waiters > 0 })
	h.hj.mu.Lock()
	early = returned
	h.hj.mu.Unlock()
	h.hj.release()
	<-done
	return early, got
}

// TestRefusalWaitsForDurability: a refusal that rests on a change not yet
// durable is answered only once that change is, like every other answer
// (docs/API.md, "Durability"). The sell and the name cases failed before:
// the second sell's ErrInsufficientShares and the taken name were answered
// while the change they rest on was still unsynced.
func TestRefusalWaitsForDurability(t *testing.T) {
	tests := []struct {
		name string
		// first starts the change (it blocks until durable); second is
		// the refusal that rests on it.
		run  func(h *heldHarness, acct, mkt uuid.UUID) (first func() error, second func() error)
		want error
	}{
		{"sell of shares a pending sell took", func(h *heldHarness, acct, mkt uuid.UUID) (func() error, func() error) {
			sell := func() error { _, err := h.sell(acct, mkt, core.Yes, money.Units(10)); return err }
			return sell, sell
		}, core.ErrInsufficientShares},
		{"merge of shares a pending sell took", func(h *heldHarness, acct, mkt uuid.UUID) (func() error, func() error) {
			return func() error { _, err := h.sell(acct, mkt, core.Yes, money.Units(10)); return err },
				func() error {
					_, err := h.e.SplitMerge(h.ctx, core.SplitRequest{Account: acct, Market: mkt, Merge: true, Amount: money.Units(10)})
					return err
				}
		}, core.ErrInsufficientShares},
		{"name a pending account took", func(h *heldHarness, _, _ uuid.UUID) (func() error, func() error) {
			return func() error {
					_, err := h.e.CreateAccount(h.ctx, core.NewAccount{Name: "Carol", Role: core.RoleSpeculator, PasswordHash: []byte("h")})
					return err
				},
				func() error { return h.e.NameAvailable(h.ctx, "carol") }
		}, core.ErrNameTaken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHeldHarness(t, core.Config{})
			acct := h.account("bob", core.RoleSpeculator, 1000)
			mkt := h.market("m", 0.05, 100)
			if _, err := h.buy(acct, mkt, core.Yes, money.Units(10)); err != nil {
				t.Fatal(err)
			}
			first, second := tt.run(h, acct, mkt)
			h.hj.hold()
			before := h.hj.appended()
			firstErr := make(chan error, 1)
			go func() { firstErr <- first() }()
			h.hj.waitUntil(func() bool { return len(h.hj.recs) > before })
			early, err := h.answeredBeforeDurable(second)
			if early {
				t.Errorf("refusal %v answered while the change it rests on was not durable", err)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("refusal: %v, want %v", err, tt.want)
			}
			if err := <-firstErr; err != nil {
				t.Fatalf("first change: %v", err)
			}
			h.check()
		})
	}
}

// TestMarketBusyAfterBoundedWait: a command that finds its market's inbox
// full gets ErrBusy after the engine's InboxWait, not when the caller's
// context ends (fasthttp's ends only at shutdown). It failed before: the
// command waited until its context's deadline.
func TestMarketBusyAfterBoundedWait(t *testing.T) {
	h := newHeldHarness(t, core.Config{InboxSize: 1, InboxWait: 20 * time.Millisecond})
	acct := h.account("bob", core.RoleSpeculator, 1000)
	mkt := h.market("m", 0.05, 100)
	gate := make(chan struct{})
	h.hj.mu.Lock()
	h.hj.gate = gate
	h.hj.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	buy := func() error {
		_, err := h.e.Trade(ctx, core.TradeRequest{Account: acct, Market: mkt, Side: core.Yes, Shares: money.Units(1)})
		return err
	}
	// The first buy stalls the market goroutine inside Next; of the two
	// others, one fills the inbox of one and the other finds it full.
	// Nothing can complete while the gate is shut, so the first answer
	// is the busy one.
	errs := make(chan error, 3)
	go func() { errs <- buy() }()
	h.hj.waitUntil(func() bool { return h.hj.atGate == 1 })
	go func() { errs <- buy() }()
	go func() { errs <- buy() }()
	err := <-errs
	ctxErr := ctx.Err()
	if !errors.Is(err, core.ErrBusy) {
		t.Errorf("first answer %v, want ErrBusy", err)
	}
	if ctxErr != nil {
		t.Errorf("ErrBusy came only when the caller's context ended (%v), not after the engine's bounded wait", ctxErr)
	}
	close(gate)
	h.hj.mu.Lock()
	h.hj.gate = nil
	h.hj.mu.Unlock()
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("trade: %v", err)
		}
	}
	h.check()
}
