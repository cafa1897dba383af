package populate_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"marketd/bench/populate"
	"marketd/core"
	"marketd/internal/cputime"
	"marketd/snapshot"
	"marketd/wal"
)

// millionAccounts is a server's state as marketd holds it after starting
// on a directory filled with 1,000,000 accounts: recovered from the
// snapshot, with its log open. Filled once per test binary.
var million struct {
	once sync.Once
	dir  string
	st   *core.State
	log  *wal.Log
	err  error
}

const heapAccounts = 1_000_000

func recoveredMillion(b *testing.B) (*core.State, *wal.Log, string) {
	million.once.Do(func() {
		dir, err := os.MkdirTemp(populateTempRoot(), "marketd-heap-")
		if err != nil {
			million.err = err
			return
		}
		million.dir = dir
		data := filepath.Join(dir, "data")
		if _, err := populate.Accounts(context.Background(), populate.Options{Dir: data, Accounts: heapAccounts}); err != nil {
			million.err = err
			return
		}
		log, err := wal.Open(filepath.Join(data, "wal"), wal.Options{})
		if err != nil {
			million.err = err
			return
		}
		st, _, err := snapshot.Recover(nil, filepath.Join(data, "snapshots"), log, nil)
		if err != nil {
			million.err = err
			return
		}
		log.Start()
		million.st, million.log = st, log
	})
	if million.err != nil {
		b.Fatal(million.err)
	}
	return million.st, million.log, million.dir
}

// populateTempRoot is where the benchmark's directory goes: the disk the
// repository is on, as a server's data directory would be.
func populateTempRoot() string {
	if d := os.Getenv("MARKETD_BENCH_DIR"); d != "" {
		return d
	}
	return ""
}

// gcCPU returns the CPU the collector has used so far, all its classes.
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}

// BenchmarkMillionAccounts measures, over the heap of a state recovered
// from a snapshot of 1,000,000 accounts (what marketd holds in the
// snapshot row of docs/PERFORMANCE.md): gc, a full collection
// (runtime.GC: its wall time, the collector's CPU, and the heap's objects
// and scannable bytes, which its mark phase walks); snapshot, a snapshot of
// it written as Run writes one (unpaced): its wall time and the process's
// CPU for it.
func BenchmarkMillionAccounts(b *testing.B) {
	st, log, dir := recoveredMillion(b)
	b.Run("gc", func(b *testing.B) {
		runtime.GC()
		var gcTotal, wall, cpu time.Duration
		for b.Loop() {
			g0, t0 := gcCPU(), time.Now()
			c0, _ := cputime.Process()
			runtime.GC()
			c1, _ := cputime.Process()
			wall += time.Since(t0)
			gcTotal += gcCPU() - g0
			cpu += c1 - c0
		}
		s := []metrics.Sample{{Name: "/gc/heap/objects:objects"}, {Name: "/gc/scan/heap:bytes"}, {Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "gc-ms")
		b.ReportMetric(float64(gcTotal.Microseconds())/1000/float64(b.N), "gc-cpu-ms")
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms")
		b.ReportMetric(float64(s[0].Value.Uint64()), "heap-objects")
		b.ReportMetric(float64(s[1].Value.Uint64())/1e6, "scan-MB")
		b.ReportMetric(float64(s[2].Value.Uint64())/1e6, "live-MB")
		b.ReportMetric(0, "ns/op")
	})
	b.Run("snapshot", func(b *testing.B) {
		snapDir := filepath.Join(dir, "snaps-bench")
		if err := os.MkdirAll(snapDir, 0o750); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var cpu, gc time.Duration
		for b.Loop() {
			// A manager that knows of no snapshot takes one at once.
			m := snapshot.NewManager(st, log, snapshot.Options{Dir: snapDir}, nil)
			c0, _ := cputime.Process()
			g0 := gcCPU()
			if _, err := m.Take(context.Background()); err != nil {
				b.Fatal(err)
			}
			c1, _ := cputime.Process()
			cpu += c1 - c0
			gc += gcCPU() - g0
		}
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms")
		b.ReportMetric(float64(gc.Microseconds())/1000/float64(b.N), "gc-cpu-ms")
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	if million.log != nil {
		million.log.Close()
	}
	if million.dir != "" {
		os.RemoveAll(million.dir)
	}
	os.Exit(code)
}
