package snapshot_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/cputime"
	"marketd/snapshot"
	"marketd/wal/record"
)

// bigNode is an engine with many accounts on a log with fsync off, built
// once per benchmark binary: creating a million accounts takes seconds.
type bigNode struct {
	n       *node
	markets []uuid.UUID
	traders []uuid.UUID
}

var (
	bigOnce sync.Once
	big     *bigNode
	bigDirs []string // removed by TestMain
)

const bigAccounts = 1_000_000

func getBig(b *testing.B) *bigNode {
	bigOnce.Do(func() {
		dir, err := os.MkdirTemp("", "marketd-bench-")
		if err != nil {
			b.Fatal(err)
		}
		bigDirs = append(bigDirs, dir)
		c := newClock(time.Now())
		n := start(b, dir, c)
		ctx := context.Background()
		admin, err := n.e.CreateAccount(ctx, core.NewAccount{Name: "admin", Role: core.RoleAdmin})
		if err != nil {
			b.Fatal(err)
		}
		bn := &bigNode{n: n}
		for i := range 8 {
			v, err := n.e.CreateMarket(ctx, core.NewMarket{Creator: admin.ID, Title: fmt.Sprint("m", i), Category: "c",
				ClosesAt: time.Now().Add(24 * time.Hour), Liquidity: money.Units(1_000_000)})
			if err != nil {
				b.Fatal(err)
			}
			bn.markets = append(bn.markets, v.ID)
		}
		for i := range bigAccounts {
			v, err := n.e.CreateAccount(ctx, core.NewAccount{Name: fmt.Sprintf("u%07d", i), Bonus: money.Units(1000)})
			if err != nil {
				b.Fatal(err)
			}
			if i < 64 {
				bn.traders = append(bn.traders, v.ID)
			}
		}
		big = bn
	})
	return big
}

// BenchmarkSnapshotPause takes a snapshot of a state with 1,000,000
// accounts while 16 goroutines trade, unpaced (as at shutdown) and paced
// to a quarter of a core (as Run takes them with -snapshot-cpu-share
// 0.25), and reports how trading was
// held up: the longest trade during the snapshot (pause-max-ms) next to
// the longest trade during a window of the same length without one
// (baseline-max-ms), the trades per second in both windows
// (during-trades/s, baseline-trades/s: on a machine the trading keeps
// busy, what the snapshot's CPU takes from it), the time trades waited for
// locks the capture held (actor-wait-ms, from the mutex profile: the
// locks of accounts and of the state's maps, taken in the market actors),
// and the snapshot's duration.
func BenchmarkSnapshotPause(b *testing.B) {
	bn := getBig(b)
	for _, c := range []struct {
		name  string
		share float64
	}{{"unpaced", 1}, {"share=0.25", 0.25}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				snapshotPause(b, bn, func() error {
					_, err := bn.n.snaps.TakePaced(context.Background(), c.share)
					return err
				})
			}
		})
	}
}

// snapshotPause measures one snapshot taken by take while 16 goroutines
// trade; see BenchmarkSnapshotPause.
func snapshotPause(b *testing.B, bn *bigNode, take func() error) {
	var stop atomic.Bool
	var mu sync.Mutex
	var lat []time.Duration
	var window atomic.Int32 // 0: baseline, 1: snapshot, 2: ignore
	window.Store(2)
	maxIn := [2]time.Duration{}
	count := [2]int{}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			ctx := context.Background()
			req := core.TradeRequest{Account: bn.traders[g], Market: bn.markets[g%len(bn.markets)], Side: core.Yes, Shares: money.Units(1)}
			for i := 0; !stop.Load(); i++ {
				w := window.Load()
				start := time.Now()
				req.Sell = i%2 == 1
				if _, err := bn.n.e.Trade(ctx, req); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(start)
				if w2 := window.Load(); w2 == w && w < 2 {
					mu.Lock()
					maxIn[w] = max(maxIn[w], d)
					count[w]++
					if w == 1 {
						lat = append(lat, d)
					}
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // warm up
	prevRate := runtime.SetMutexProfileFraction(1)
	waitBefore := captureLockWait(b)
	window.Store(1)
	t0 := time.Now()
	if err := take(); err != nil {
		b.Fatal(err)
	}
	took := time.Since(t0)
	window.Store(2)
	waited := captureLockWait(b) - waitBefore
	runtime.SetMutexProfileFraction(prevRate)
	// The baseline: trading alone for as long as the snapshot took.
	window.Store(0)
	time.Sleep(took)
	window.Store(2)
	stop.Store(true)
	wg.Wait()
	slices.Sort(lat)
	b.ReportMetric(float64(took.Milliseconds()), "snapshot-ms")
	b.ReportMetric(float64(maxIn[1].Microseconds())/1000, "pause-max-ms")
	b.ReportMetric(float64(maxIn[0].Microseconds())/1000, "baseline-max-ms")
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-during-ms")
	}
	b.ReportMetric(float64(count[1])/took.Seconds(), "during-trades/s")
	b.ReportMetric(float64(count[0])/took.Seconds(), "baseline-trades/s")
	b.ReportMetric(float64(waited)/float64(time.Millisecond), "actor-wait-ms")
}

// captureLockWait returns the time goroutines waited, since mutex
// profiling was turned on, for locks that a snapshot's capture released:
// the mutex profile charges a contention's delay to the stack that
// unlocked.
func captureLockWait(b *testing.B) time.Duration {
	var buf bytes.Buffer
	if err := pprof.Lookup("mutex").WriteTo(&buf, 1); err != nil {
		b.Fatal(err)
	}
	// debug=1: "cycles/second=N", then per stack "cycles count @ pcs" and
	// "#\tpc func+off file:line" lines.
	var perSecond, cycles, total float64
	inRecord := false
	for line := range strings.Lines(buf.String()) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "cycles/second="):
			perSecond, _ = strconv.ParseFloat(strings.TrimPrefix(line, "cycles/second="), 64)
		case strings.Contains(line, " @ "):
			f := strings.Fields(line)
			cycles, _ = strconv.ParseFloat(f[0], 64)
			inRecord = true
		case inRecord && strings.HasPrefix(line, "#") && strings.Contains(line, "marketd/core.(*State).capture"):
			total += cycles
			inRecord = false // count each record once
		case line == "":
			inRecord = false
		}
	}
	if perSecond == 0 {
		return 0
	}
	return time.Duration(total / perSecond * float64(time.Second))
}

// BenchmarkCapture measures the capture and encoding of 1,000,000 accounts
// on its own (no trading), as objects per second.
func BenchmarkCapture(b *testing.B) {
	bn := getBig(b)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if _, err := bn.n.e.State().Capture(4096, func(r *core.Record) error {
			n += len(r.Accounts) + len(r.Markets)
			_ = record.Append(nil, r)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n), "objects")
	}
}

// BenchmarkRecover measures recovery from the log alone: 500,000 trade
// records replayed onto the state (decode, verify, apply), in records/s.
// It recovers at the collector's target cmd/marketd sets while it
// recovers (RecoveryGCPercent), and builds the log at the usual one.
func BenchmarkRecover(b *testing.B) {
	dir := b.TempDir()
	c := newClock(time.Now())
	n := start(b, dir, c)
	ctx := context.Background()
	admin, _ := n.e.CreateAccount(ctx, core.NewAccount{Name: "admin", Role: core.RoleAdmin})
	var markets, traders []uuid.UUID
	for i := range 64 {
		v, err := n.e.CreateMarket(ctx, core.NewMarket{Creator: admin.ID, Title: "m", Category: "c",
			ClosesAt: time.Now().Add(24 * time.Hour), Liquidity: money.Units(1_000_000)})
		if err != nil {
			b.Fatal(err)
		}
		markets = append(markets, v.ID)
		a, err := n.e.CreateAccount(ctx, core.NewAccount{Name: fmt.Sprintf("trader%d", i), Bonus: money.Units(1_000_000)})
		if err != nil {
			b.Fatal(err)
		}
		traders = append(traders, a.ID)
	}
	const trades = 500_000
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			req := core.TradeRequest{Account: traders[g], Market: markets[g], Side: core.No, Shares: money.Units(1), Reasoning: "benchmark"}
			for i := range trades / 64 {
				req.Sell = i%2 == 1
				if _, err := n.e.Trade(ctx, req); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	records := n.log.LastSeq()
	n.stop()
	b.ResetTimer()
	b.ReportAllocs()
	cpu0, hasCPU := cputime.Process()
	for b.Loop() {
		gcPercent := debug.SetGCPercent(snapshot.RecoveryGCPercent)
		st, log, _, err := recoverDir(dir)
		debug.SetGCPercent(gcPercent)
		if err != nil {
			b.Fatal(err)
		}
		_ = st
		if err := log.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	// CPU per record, all goroutines: steadier than the rate on a shared
	// machine, and what the rate needs of two cores (2,000,000 records/s is
	// at most 1 us of CPU per record).
	if cpu1, _ := cputime.Process(); hasCPU {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/1000/float64(records)/float64(b.N), "cpu-us/record")
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if big != nil {
		big.n.stop()
	}
	for _, d := range bigDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}
