package bench

import (
	"testing"

	"marketd/bench/baseline"
	"marketd/internal/cputime"
)

// BenchmarkFsyncCost appends a group commit's worth of bytes (20 records
// of baseline.RecordBytes) to a file and fsyncs it, one goroutine, as a log
// writer does, and reports the process's CPU time per fsync (cpu-us/op)
// beside the wall time (ns/op). An fsync is mostly waiting for the disk,
// but what it costs the CPU is taken from the request handlers sharing the
// cores: it is part of the cost of every durable request.
func BenchmarkFsyncCost(b *testing.B) {
	f := diskFile(b, "fsync-cost")
	buf := make([]byte, 20*baseline.RecordBytes)
	cpu0, hasCPU := cputime.Process()
	for b.Loop() {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	if cpu1, ok := cputime.Process(); hasCPU && ok {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
	}
}
