package core_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
)

// holdJournal is a journal whose acknowledgements a test releases or fails,
// as a group commit would after its fsync.
type holdJournal struct {
	mu      sync.Mutex
	cond    sync.Cond
	next    uint64
	held    []chan<- error
	failed  error
	waiters int
}

func newHoldJournal() *holdJournal {
	j := &holdJournal{}
	j.cond.L = &j.mu
	return j
}

func (j *holdJournal) Next() (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.next++
	return j.next, nil
}

func (j *holdJournal) Append(_ uint64, _ *core.Record, done chan<- error) {
	j.mu.Lock()
	j.held = append(j.held, done)
	j.cond.Broadcast()
	j.mu.Unlock()
}

// WaitDurable waits for the failure: nothing held here is ever durable.
func (j *holdJournal) WaitDurable(context.Context, uint64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.waiters++
	j.cond.Broadcast()
	for j.failed == nil {
		j.cond.Wait()
	}
	return j.failed
}

// waitFor blocks until cond holds. Lock should not be held.
func (j *holdJournal) waitFor(cond func() bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for !cond() {
		j.cond.Wait()
	}
}

func (j *holdJournal) release() {
	j.mu.Lock()
	for _, d := range j.held {
		d <- nil
	}
	j.held = nil
	j.mu.Unlock()
}

func (j *holdJournal) fail(err error) {
	j.mu.Lock()
	j.failed = err
	for _, d := range j.held {
		d <- err
	}
	j.held = nil
	j.cond.Broadcast()
	j.mu.Unlock()
}

// A second revoke of a key whose first revoke is not durable yet must not
// answer "revoked": if the first never becomes durable, the key is active
// again after recovery.
func TestRevokeAnswersOnlyOnceDurable(t *testing.T) {
	j := newHoldJournal()
	e := core.NewEngine(core.NewState(), j, core.Config{CloseInterval: -1})
	defer e.Close()
	ctx := context.Background()
	created := make(chan core.AccountView, 1)
	go func() {
		v, _ := e.CreateAccount(ctx, core.NewAccount{Name: "alice"})
		created <- v
	}()
	j.waitFor(func() bool { return len(j.held) == 1 })
	j.release()
	alice := (<-created).ID
	keyc := make(chan core.Key, 1)
	go func() {
		k, _ := e.CreateKey(ctx, core.NewKey{Account: alice, Name: "k", Hash: [32]byte{1}, Prefix: "svc_live_01234567", Scopes: core.ScopeRead})
		keyc <- k
	}()
	j.waitFor(func() bool { return len(j.held) == 1 })
	j.release()
	k := <-keyc

	first, second := make(chan error, 1), make(chan error, 1)
	go func() { _, err := e.RevokeKey(ctx, alice, k.ID); first <- err }()
	j.waitFor(func() bool { return len(j.held) == 1 }) // applied, not durable
	go func() {
		_, err := e.RevokeKey(ctx, alice, k.ID)
		second <- err
		j.mu.Lock()
		j.cond.Broadcast()
		j.mu.Unlock()
	}()
	// The second revoke must wait for the first: it either waits on the
	// journal or, wrongly, answers at once.
	j.waitFor(func() bool { return j.waiters == 1 || len(second) == 1 })
	j.fail(errors.New("fsync failed"))
	if err := <-first; err == nil {
		t.Fatal("the first revoke succeeded although its record failed")
	}
	if err := <-second; err == nil {
		t.Fatal("the second revoke answered success while the first revoke was never durable")
	}
}

// A market is findable only once its goroutine runs: trading on every
// market as soon as a listing shows it never finds a missing inbox.
func TestMarketFindableOnlyWhenRunning(t *testing.T) {
	h := newHarness(t)
	a := h.account("trader", core.RoleSpeculator, 100000)
	var stop atomic.Bool
	seen := map[uuid.UUID]bool{}
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		for !stop.Load() {
			for _, v := range h.e.Markets() {
				if seen[v.ID] {
					continue
				}
				seen[v.ID] = true
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				_, err := h.e.Trade(ctx, core.TradeRequest{Account: a, Market: v.ID, Side: core.Yes, Shares: money.Units(1)})
				cancel()
				if err != nil {
					errc <- err
					return
				}
			}
			runtime.Gosched()
		}
	}()
	for range 500 {
		h.market("m", 0, 100)
	}
	stop.Store(true)
	if err := <-errc; err != nil {
		t.Fatalf("trade on a just-listed market: %v", err)
	}
}

func TestClosesAtBounded(t *testing.T) {
	h := newHarness(t)
	_, err := h.e.CreateMarket(h.ctx, core.NewMarket{Creator: h.admin, Title: "far", Category: "c",
		ClosesAt: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)})
	var fe *core.FieldError
	if !errors.As(err, &fe) || fe.Field != "closes_at" {
		t.Fatalf("closes_at in 2300 = %v, want a field error", err)
	}
}
