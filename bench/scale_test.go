//go:build scale

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/fstype"
	"marketd/snapshot"
	"marketd/wal"
)

// The scale runs of `make scale` (docs/PERFORMANCE.md, "Settlement and
// snapshots at scale"): a market of 1,000,000 holders closed and settled
// in bounded steps, and an account of 1,000,000 transfers through a
// snapshot, each on the real log with fsync on, in a directory on disk.
// They take minutes and gigabytes, so they are behind the build tag scale,
// outside `make test`. SCALE_HOLDERS and SCALE_TRANSFERS make them smaller.

func scaleCount(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// peakRSS resets the kernel's peak resident size of this process (0) or
// reads it (1), in bytes: /proc/self/clear_refs with 5 resets VmHWM.
func resetPeakRSS(t *testing.T) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("cannot reset the peak RSS: %v", err)
	}
}

func peakRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

func heapMiB() float64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// openLog opens the log in dir and recovers its state, as marketd does.
func openLog(t *testing.T, dir string) (*wal.Log, *core.State, snapshot.Recovered) {
	t.Helper()
	log, err := wal.Open(filepath.Join(dir, "wal"), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, rec, err := snapshot.Recover(nil, filepath.Join(dir, "snapshots"), log, nil)
	if err != nil {
		t.Fatal(err)
	}
	log.Start()
	return log, st, rec
}

// TestScaleMillionHolders fills a market with SCALE_HOLDERS (1,000,000)
// holders, closes it and settles it, and recovers the whole log.
func TestScaleMillionHolders(t *testing.T) {
	holders := scaleCount("SCALE_HOLDERS", 1_000_000)
	dir := fstype.DiskTempDir(t)
	log, st, _ := openLog(t, dir)
	ctx := context.Background()
	clock := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var offset atomic.Int64 // moved past the closing time before the close
	now := func() time.Time { return clock.Add(time.Duration(offset.Load())) }
	e := core.NewEngine(st, log, core.Config{Now: now, CloseInterval: -1, UsageFlushInterval: -1,
		OracleInterval: -1, PurgeInterval: -1})
	admin, err := e.CreateAccount(ctx, core.NewAccount{Name: "admin", Role: core.RoleAdmin, PasswordHash: []byte("h")})
	if err != nil {
		t.Fatal(err)
	}
	mv, err := e.CreateMarket(ctx, core.NewMarket{Creator: admin.ID, Title: "popular", Category: "scale",
		ClosesAt: now().Add(time.Hour), Alpha: 0.05, Liquidity: money.Units(1_000_000)})
	if err != nil {
		t.Fatal(err)
	}
	mkt := mv.ID
	proposer, err := e.CreateAccount(ctx, core.NewAccount{Name: "proposer", PasswordHash: []byte("h"), Bonus: money.Units(1000)})
	if err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	const workers = 256
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(holders) {
					return
				}
				a, err := e.CreateAccount(ctx, core.NewAccount{Name: fmt.Sprintf("holder%d", i), PasswordHash: []byte("h"), Bonus: money.Units(10)})
				if err == nil {
					_, err = e.Trade(ctx, core.TradeRequest{Account: a.ID, Market: mkt, Side: core.Side(i % 2), Shares: money.Units(1)})
				}
				if err != nil {
					errs <- fmt.Errorf("holder %d: %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("setup: %d holders (an account and a trade each) in %v, log at %d, heap %.0f MiB",
		holders, time.Since(began).Round(time.Millisecond), log.Durable(), heapMiB())

	// The close: a notification per holder, in steps.
	offset.Store(int64(2 * time.Hour))
	runtime.GC()
	resetPeakRSS(t)
	before, began := log.Durable(), time.Now()
	if n, err := e.CloseDue(ctx); err != nil || n != 1 {
		t.Fatalf("close: %d, %v", n, err)
	}
	t.Logf("close: %v, %d records, peak RSS %d MiB, heap %.0f MiB",
		time.Since(began).Round(time.Millisecond), log.Durable()-before, peakRSS(t)>>20, heapMiB())

	// An oracle proposal: a notification per holder, in steps.
	runtime.GC()
	resetPeakRSS(t)
	before, began = log.Durable(), time.Now()
	if _, err := e.Propose(ctx, core.ProposeRequest{Account: proposer.ID, Market: mkt, Outcome: core.Yes}); err != nil {
		t.Fatal(err)
	}
	t.Logf("oracle proposal: %v, %d records, peak RSS %d MiB, heap %.0f MiB",
		time.Since(began).Round(time.Millisecond), log.Durable()-before, peakRSS(t)>>20, heapMiB())

	// The settlement: a payout per holder, in steps (it cancels the
	// proposal and returns its bond).
	runtime.GC()
	resetPeakRSS(t)
	before, began = log.Durable(), time.Now()
	res, err := e.Settle(ctx, core.SettleRequest{Market: mkt, Outcome: core.Yes})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("settle: %v, %d records, %d positions paid, %s KP paid, peak RSS %d MiB, heap %.0f MiB",
		time.Since(began).Round(time.Millisecond), log.Durable()-before, res.PositionsPaid, res.TotalPaid[money.KP],
		peakRSS(t)>>20, heapMiB())
	if v, _ := e.Market(mkt); v.Info.Status != core.StatusResolved {
		t.Fatalf("market %s after the settlement", v.Info.Status)
	}
	began = time.Now()
	if err := e.State().Check(); err != nil {
		t.Fatal(err)
	}
	t.Logf("invariant check: %v", time.Since(began).Round(time.Millisecond))
	e.Close()
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}

	// Recovery replays the whole log (no snapshot) and checks the state.
	runtime.GC()
	resetPeakRSS(t)
	began = time.Now()
	log, st, rec := openLog(t, dir)
	t.Logf("recovery: %d records replayed and checked in %v, peak RSS %d MiB",
		rec.Replayed, time.Since(began).Round(time.Millisecond), peakRSS(t)>>20)
	if v, ok := st.Canonical(), true; ok {
		for _, m := range v.Markets {
			if m.ID == mkt && m.Info.Status != core.StatusResolved {
				t.Fatalf("recovered market %s", m.Info.Status)
			}
		}
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestScaleMillionTransfers logs an account of SCALE_TRANSFERS (1,000,000)
// credited deposits, 10,000 a record, takes a snapshot of it and recovers
// from the snapshot.
func TestScaleMillionTransfers(t *testing.T) {
	transfers := scaleCount("SCALE_TRANSFERS", 1_000_000)
	const perRecord = 10_000
	dir := fstype.DiskTempDir(t)
	log, st, _ := openLog(t, dir)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC).UnixNano()
	id := uuid.New()
	appendRec := func(rec *core.Record) {
		t.Helper()
		seq, err := log.Next()
		if err != nil {
			t.Fatal(err)
		}
		for i := range rec.Accounts {
			for j := range rec.Accounts[i].Ledger {
				rec.Accounts[i].Ledger[j].Seq = seq
			}
		}
		if err := st.Apply(seq, rec); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		log.Append(seq, rec, done)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	appendRec(&core.Record{Kind: core.KindAccountCreated, Time: now, Accounts: []core.AccountChange{{
		ID: id, Info: &core.AccountInfo{Name: "whale", PasswordHash: []byte("h"), CreatedAt: now, ReferralCode: "WHALE0001"},
	}}})
	began := time.Now()
	var balance money.Amount
	prev := log.Durable()
	supplyPrev := uint64(0)
	for done := 0; done < transfers; {
		n := min(perRecord, transfers-done)
		ch := core.AccountChange{ID: id, Prev: prev}
		for i := range n {
			k := done + i
			tr := core.Transfer{ID: uuid.New(), Kind: core.TransferDeposit, Status: core.TransferCredited,
				Amount: 1, TxHash: fmt.Sprintf("0x%064x", k), Time: now}
			balance++
			ch.Transfers = append(ch.Transfers, tr)
			ch.Ledger = append(ch.Ledger, core.LedgerEntry{Index: uint32(i), Currency: money.USDC, Type: core.TxDeposit,
				Amount: 1, BalanceAfter: balance, Ref: tr.ID, Time: now})
		}
		ch.Balances = []core.Balance{{Currency: money.USDC, After: balance}}
		var minted [money.NumCurrencies]money.Amount
		minted[money.USDC] = balance
		appendRec(&core.Record{Kind: core.KindDeposit, Time: now, Accounts: []core.AccountChange{ch},
			Supply: &core.SupplyChange{Prev: supplyPrev, Minted: minted}})
		prev = log.Durable()
		supplyPrev = prev
		done += n
	}
	t.Logf("setup: %d transfers in %d records in %v, heap %.0f MiB", transfers, log.Durable()-1,
		time.Since(began).Round(time.Millisecond), heapMiB())
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}

	snaps := snapshot.NewManager(st, log, snapshot.Options{Dir: filepath.Join(dir, "snapshots")}, nil)
	runtime.GC()
	resetPeakRSS(t)
	began = time.Now()
	h, err := snaps.Take(context.Background())
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	stats := snaps.Stats()
	t.Logf("snapshot: %v, %d chunks, %d bytes, peak RSS %d MiB", time.Since(began).Round(time.Millisecond),
		h.Chunks, stats.LastSizeBytes, peakRSS(t)>>20)
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}

	runtime.GC()
	resetPeakRSS(t)
	began = time.Now()
	log, got, rec := openLog(t, dir)
	defer log.Close()
	if rec.Snapshot == nil {
		t.Fatal("recovery did not use the snapshot")
	}
	t.Logf("recovery from the snapshot: %v (%d records replayed), peak RSS %d MiB",
		time.Since(began).Round(time.Millisecond), rec.Replayed, peakRSS(t)>>20)
	for _, a := range got.Canonical().Accounts {
		if a.ID == id && (len(a.Transfers) != transfers || len(a.Ledger) != transfers) {
			t.Fatalf("recovered %d transfers and %d ledger entries, want %d", len(a.Transfers), len(a.Ledger), transfers)
		}
	}
}
