package snapshot_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/manualclock"
	"marketd/snapshot"
	"marketd/wal"
)

// newClock is the tests' clock: recovery tests compare whole states,
// timestamps included, so time must not depend on the machine; it moves by
// a millisecond at every reading.
func newClock(start time.Time) *manualclock.Clock {
	return manualclock.NewTicking(start, time.Millisecond)
}

// quiet drops the logs of the many recoveries the tests run.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// node is a running engine on a real log in a directory.
type node struct {
	t     testing.TB
	dir   string
	log   *wal.Log
	e     *core.Engine
	snaps *snapshot.Manager
	clock *manualclock.Clock
}

func walDir(dir string) string  { return filepath.Join(dir, "wal") }
func snapDir(dir string) string { return filepath.Join(dir, "snapshots") }

// start recovers the state in dir and runs an engine on it.
func start(t testing.TB, dir string, c *manualclock.Clock) *node {
	t.Helper()
	st, log, rec, err := recoverDir(dir)
	if err != nil {
		t.Fatalf("recover %s: %v", dir, err)
	}
	log.Start()
	n := &node{t: t, dir: dir, log: log, clock: c}
	n.e = core.NewEngine(st, log, core.Config{Now: c.Now, CloseInterval: -1})
	n.snaps = snapshot.NewManager(st, log, snapshot.Options{Dir: snapDir(dir), Now: c.Now, ChunkObjects: 3, Logger: quiet}, rec.Snapshot)
	return n
}

func recoverDir(dir string) (*core.State, *wal.Log, snapshot.Recovered, error) {
	log, err := wal.Open(walDir(dir), wal.Options{NoFsync: true, SegmentSizeBytes: 1 << 20, Logger: quiet})
	if err != nil {
		return nil, nil, snapshot.Recovered{}, err
	}
	st, rec, err := snapshot.Recover(nil, snapDir(dir), log, quiet)
	if err != nil {
		return nil, nil, rec, errors.Join(err, log.Close())
	}
	return st, log, rec, nil
}

func (n *node) stop() {
	n.e.Close()
	if err := n.log.Close(); err != nil {
		n.t.Fatalf("close log: %v", err)
	}
}

// workload drives random operations of every kind through a node.
type workload struct {
	t       testing.TB
	r       *rand.Rand
	n       *node
	ctx     context.Context
	admin   uuid.UUID
	accts   []uuid.UUID
	markets []uuid.UUID
}

func newWorkload(t testing.TB, n *node, seed uint64) *workload {
	w := &workload{t: t, r: rand.New(rand.NewPCG(seed, 99)), n: n, ctx: context.Background()}
	v, err := n.e.CreateAccount(w.ctx, core.NewAccount{Name: "admin", Role: core.RoleAdmin, PasswordHash: []byte("h")})
	if err != nil {
		t.Fatal(err)
	}
	w.admin = v.ID
	return w
}

var refusals = []error{core.ErrInsufficientBalance, core.ErrInsufficientShares, core.ErrInsufficientLiquidity,
	core.ErrLiquidityLimit, core.ErrSlippage, core.ErrMarketNotActive, core.ErrMarketResolved,
	core.ErrReferrerSet, core.ErrSelfReferral, core.ErrReferralCycle, core.ErrKeyLimit, core.ErrKeyNotFound, core.ErrSessionNotFound}

// step runs one random operation; it reports whether it changed the state.
func (w *workload) step() bool {
	e, r, ctx := w.n.e, w.r, w.ctx
	if len(w.accts) < 2 || r.IntN(20) == 0 {
		v, err := e.CreateAccount(ctx, core.NewAccount{Name: fmt.Sprintf("user%d", len(w.accts)), PasswordHash: []byte("h"), Bonus: money.Units(1 + r.Int64N(5000))})
		w.must(err)
		w.accts = append(w.accts, v.ID)
		return true
	}
	if len(w.markets) == 0 || r.IntN(25) == 0 {
		v, err := e.CreateMarket(ctx, core.NewMarket{Creator: w.admin, Title: "m", Category: "c",
			ClosesAt: w.n.clock.Now().Add(time.Hour), Alpha: 0.002 + r.Float64()*0.5, Liquidity: money.Units(1 + r.Int64N(1000))})
		w.must(err)
		w.markets = append(w.markets, v.ID)
		return true
	}
	a, m := w.accts[r.IntN(len(w.accts))], w.markets[r.IntN(len(w.markets))]
	var err error
	switch k := r.IntN(100); {
	case k < 45:
		_, err = e.Trade(ctx, core.TradeRequest{Account: a, Market: m, Side: core.Side(r.IntN(2)), Shares: money.Amount(1 + r.Int64N(50_000_000)), Sell: r.IntN(3) == 0, Reasoning: "why"})
	case k < 65:
		_, err = e.SplitMerge(ctx, core.SplitRequest{Account: a, Market: m, Amount: money.Amount(1 + r.Int64N(20_000_000)), Merge: r.IntN(2) == 0})
	case k < 70:
		_, err = e.Settle(ctx, core.SettleRequest{Market: m, Outcome: core.Side(r.IntN(2))})
	case k < 75:
		err = e.SetReferrer(ctx, a, w.accts[r.IntN(len(w.accts))], money.Units(100))
	case k < 85:
		var h [32]byte
		for i := range h {
			h[i] = byte(r.Uint32())
		}
		_, err = e.CreateKey(ctx, core.NewKey{Account: a, Name: "k", Hash: h, Prefix: "svc_live_abcdefgh", Scopes: core.ScopeRead | core.ScopeTrade})
	case k < 90:
		keys := e.Keys(a)
		if len(keys) == 0 {
			return false
		}
		k := keys[r.IntN(len(keys))]
		if r.IntN(2) == 0 {
			_, err = e.RevokeKey(ctx, a, k.ID)
		} else {
			_, err = e.RotateKey(ctx, a, k.ID, [32]byte{byte(r.Uint32()), byte(r.Uint32()), 1}, "svc_live_12345678")
		}
	case k < 95:
		var h [32]byte
		h[0], h[1], h[2] = byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32())
		err = e.CreateSession(ctx, core.Session{Hash: h, Account: a, ExpiresAt: w.n.clock.Now().Add(time.Hour).UnixNano()})
		if err == nil && r.IntN(2) == 0 {
			w.must(e.RevokeSession(ctx, h))
		}
	default:
		w.n.clock.Advance(20 * time.Minute)
		var closed int
		closed, err = e.CloseDue(ctx)
		return err == nil && closed > 0
	}
	for _, ref := range refusals {
		if errors.Is(err, ref) {
			return false
		}
	}
	var fe *core.FieldError
	if errors.As(err, &fe) {
		return false
	}
	w.must(err)
	return true
}

func (w *workload) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}
