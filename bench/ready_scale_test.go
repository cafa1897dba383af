//go:build scale

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/cputime"
	"marketd/internal/fstype"
	"marketd/snapshot"
	"marketd/wal"
)

// TestScaleTimeToReady measures a restart of a server holding
// SCALE_READY_ACCOUNTS (1,000,000) accounts in a snapshot and
// SCALE_READY_RECORDS (1,000,000) trade records in the log after it: the
// time from opening the log to an engine ready for requests (the log's
// repair and Open, loading the snapshot, replaying the records, the
// state's check), and the replay's rate in records a second. The setup
// writes with fsync off; the restart opens the log as marketd does.
// SCALE_READY_PROFILE names a file for a CPU profile of the restart;
// SCALE_READY_GOGC sets the collector's target during it (default
// snapshot.RecoveryGCPercent, as cmd/marketd).
func TestScaleTimeToReady(t *testing.T) {
	accounts := scaleCount("SCALE_READY_ACCOUNTS", 1_000_000)
	records := scaleCount("SCALE_READY_RECORDS", 1_000_000)
	const traders, markets = 64, 8
	dir := fstype.DiskTempDir(t)
	walPath, snapPath := filepath.Join(dir, "wal"), filepath.Join(dir, "snapshots")
	log, err := wal.Open(walPath, wal.Options{NoFsync: true, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	st, rec, err := snapshot.Recover(nil, snapPath, log, quietLogger)
	if err != nil {
		t.Fatal(err)
	}
	log.Start()
	e := core.NewEngine(st, log, core.Config{CloseInterval: -1})
	ctx := context.Background()
	admin, err := e.CreateAccount(ctx, core.NewAccount{Name: "admin", Role: core.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	var ms []uuid.UUID
	for i := range markets {
		v, err := e.CreateMarket(ctx, core.NewMarket{Creator: admin.ID, Title: fmt.Sprint("m", i), Category: "bench",
			ClosesAt: time.Now().Add(24 * time.Hour), Liquidity: money.Units(1_000_000)})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, v.ID)
	}
	began := time.Now()
	ids := make([]uuid.UUID, accounts)
	var next atomic.Int64
	parallel := func(n int, fn func(i int) error) {
		t.Helper()
		var wg sync.WaitGroup
		var failed atomic.Pointer[error]
		next.Store(0)
		for range traders {
			wg.Go(func() {
				for {
					i := int(next.Add(1) - 1)
					if i >= n || failed.Load() != nil {
						return
					}
					if err := fn(i); err != nil {
						failed.Store(&err)
						return
					}
				}
			})
		}
		wg.Wait()
		if p := failed.Load(); p != nil {
			t.Fatal(*p)
		}
	}
	parallel(accounts, func(i int) error {
		v, err := e.CreateAccount(ctx, core.NewAccount{Name: fmt.Sprintf("bot%07d", i), Bonus: money.Units(1_000)})
		ids[i] = v.ID
		return err
	})
	t.Logf("setup: %d accounts in %v, heap %.0f MiB", accounts, time.Since(began).Round(time.Millisecond), heapMiB())
	snaps := snapshot.NewManager(st, log, snapshot.Options{Dir: snapPath, Logger: quietLogger}, rec.Snapshot)
	began = time.Now()
	if _, err := snaps.Take(ctx); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	t.Logf("setup: snapshot in %v", time.Since(began).Round(time.Millisecond))
	began = time.Now()
	before := log.LastSeq()
	parallel(records/2, func(i int) error {
		// A buy, then the sell of that share, by the account of index i
		// mod 4,096 on one of the markets: trade records over many accounts.
		req := core.TradeRequest{Account: ids[i%min(4096, accounts)], Market: ms[i%markets], Side: core.Yes, Shares: money.Units(1)}
		if _, err := e.Trade(ctx, req); err != nil {
			return err
		}
		req.Sell = true
		_, err := e.Trade(ctx, req)
		return err
	})
	t.Logf("setup: %d trade records in %v", log.LastSeq()-before, time.Since(began).Round(time.Millisecond))
	e.Close()
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}

	runtime.GC()
	if path := os.Getenv("SCALE_READY_PROFILE"); path != "" {
		// A CPU profile of the restart alone, the setup left out.
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				t.Error(err)
			}
		}()
	}
	resetPeakRSS(t)
	// As cmd/marketd does during recovery.
	gcPercent := debug.SetGCPercent(scaleCount("SCALE_READY_GOGC", snapshot.RecoveryGCPercent))
	cpu0, _ := cputime.Process()
	began = time.Now()
	log, err = wal.Open(walPath, wal.Options{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	opened := time.Since(began)
	st, rec, err = snapshot.Recover(nil, snapPath, log, quietLogger)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC() // as cmd/marketd does after recovering
	log.Start()
	e = core.NewEngine(st, log, core.Config{CloseInterval: -1})
	ready := time.Since(began)
	cpu1, _ := cputime.Process()
	debug.SetGCPercent(gcPercent)
	rss := peakRSS(t)
	defer func() {
		e.Close()
		if err := log.Close(); err != nil {
			t.Error(err)
		}
	}()
	if rec.Snapshot == nil || rec.Replayed < uint64(records) {
		t.Fatalf("recovery: snapshot %v, %d records replayed, want a snapshot and at least %d", rec.Snapshot, rec.Replayed, records)
	}
	t.Logf("time to ready: %v (log open %v), %d accounts from the snapshot, %d records replayed; recovery at %.0f records/s over the whole time; %v of CPU; peak RSS %d MiB, heap %.0f MiB",
		ready.Round(time.Millisecond), opened.Round(time.Millisecond), accounts, rec.Replayed, float64(rec.Replayed)/ready.Seconds(),
		(cpu1 - cpu0).Round(time.Millisecond), rss>>20, heapMiB())
}
