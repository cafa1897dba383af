package wal

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	tidwall "github.com/tidwall/wal"

	"marketd/internal/cputime"
	"marketd/internal/fstype"
	"marketd/wal/record"
	"marketd/wal/record/recordgen"
)

// BenchmarkSegmentBuffer measures what tidwall's in-memory copy of the
// current segment costs the writer, for several segment sizes. Tidwall
// appends every entry to a byte slice holding the whole segment (its
// segment.ebuf) and grows it by append, so the slice is reallocated and its
// bytes copied every time it outgrows its capacity; a new segment starts
// from an empty slice again.
//
// One goroutine writes batches of commitRecords trade frames (as one commit
// of the writer) straight to a tidwall log opened as Open opens it (NoSync),
// and for each WriteBatch reads the bytes the process allocated meanwhile
// (runtime/metrics, exact for a single goroutine that allocates nothing
// else) and the CPU time of the writing thread (which, unlike wall time,
// leaves out the waits for a core on a shared machine; the longest wall
// time is reported beside it). A WriteBatch that allocated more than the
// batch's own bytes reallocated the segment slice. Reported per segment:
// the reallocations, the bytes allocated, the largest reallocation; per
// WriteBatch: the median, p99 and longest CPU time, and the longest of those
// that reallocated, of those that started a new segment and of the rest. fsync is off (the writer
// fsyncs after WriteBatch; tidwall fsyncs a full segment inside it).
func BenchmarkSegmentBuffer(b *testing.B) {
	const commitRecords = 150 // a durable commit's size in core's benchmarks
	for _, c := range []struct {
		segBytes int
		reused   bool
	}{{256 << 10, false}, {1 << 20, false}, {4 << 20, false}, {20 << 20, false}, {1 << 20, true}, {4 << 20, true}} {
		segBytes := c.segBytes
		name := fmt.Sprintf("segment=%dKiB", segBytes>>10)
		if c.reused {
			name += "-reused"
		}
		b.Run(name, func(b *testing.B) {
			dir := fstype.DiskTempDir(b)
			tw, err := tidwall.Open(dir, &tidwall.Options{NoSync: true, SegmentSize: segBytes,
				LogFormat: tidwall.Binary, SegmentCacheSize: 1, AllowEmpty: true, DirPerms: 0o750, FilePerms: 0o640})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := tw.Close(); err != nil {
					b.Error(err)
				}
			}()
			// -reused: the writer's workaround (segbuf.go): a buffer of
			// the segment's size in each new segment, and every batch
			// ending with the entry that fills one.
			var sb segmentBuffers
			if c.reused {
				sb = newSegmentBuffers(tw, segBytes)
				sb.install()
			}
			frame := record.AppendFramed(nil, 1, recordgen.Trade(1))
			sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
			allocated := func() uint64 {
				metrics.Read(sample)
				return sample[0].Value.Uint64()
			}
			var (
				batch                    tidwall.Batch
				seq                      uint64
				took                     []time.Duration
				reallocs, allocBytes     uint64
				largest                  uint64
				maxRealloc, maxNoRealloc time.Duration
				maxCycle, maxWall        time.Duration
				segLen                   int // tidwall's len(ebuf), by its rule
			)
			entryBytes := len(binary.AppendUvarint(nil, uint64(len(frame)))) + len(frame)
			// A few segments per run at least, whatever b.N is.
			batches := max(b.N, 4*segBytes/(commitRecords*len(frame))+1)
			b.SetBytes(int64(commitRecords * len(frame)))
			runtime.LockOSThread() // for its CPU time
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			for range batches {
				cycles := false
				room, fill := sb.room(), 0
				for range commitRecords {
					seq++
					batch.Write(seq, frame)
					// Tidwall starts a new segment once the current one
					// reaches SegmentSize, inside the WriteBatch that got it
					// there: it fsyncs the full segment and creates a file.
					if segLen += entryBytes; segLen >= segBytes {
						segLen, cycles = 0, true
					}
					if fill += entryBytes; room > 0 && fill >= room {
						break
					}
				}
				a0 := allocated()
				c0, _ := cputime.Thread()
				start := time.Now()
				if err := tw.WriteBatch(&batch); err != nil {
					b.Fatal(err)
				}
				sb.install()
				wall := time.Since(start)
				c1, _ := cputime.Thread()
				d := c1 - c0
				a := allocated() - a0
				took = append(took, d)
				maxWall = max(maxWall, wall)
				allocBytes += a
				// The batch's own slices are reused; anything past a
				// commit's size is the segment's slice growing.
				switch {
				case cycles:
					maxCycle = max(maxCycle, d)
				case a > uint64(commitRecords*len(frame)):
					reallocs++
					largest = max(largest, a)
					maxRealloc = max(maxRealloc, d)
				default:
					maxNoRealloc = max(maxNoRealloc, d)
				}
			}
			b.StopTimer()
			segments := float64(seq) * float64(len(frame)+2) / float64(segBytes)
			slices.Sort(took)
			at := func(q float64) time.Duration { return took[int(q*float64(len(took)-1))] }
			b.ReportMetric(float64(reallocs)/segments, "reallocs/segment")
			b.ReportMetric(float64(allocBytes)/segments/float64(segBytes), "alloc-x-segment")
			b.ReportMetric(float64(largest)/(1<<20), "largest-MiB")
			b.ReportMetric(float64(at(0.5).Microseconds()), "p50-us")
			b.ReportMetric(float64(at(0.99).Microseconds()), "p99-us")
			b.ReportMetric(float64(took[len(took)-1].Microseconds()), "max-us")
			b.ReportMetric(float64(maxRealloc.Microseconds()), "max-realloc-us")
			b.ReportMetric(float64(maxNoRealloc.Microseconds()), "max-other-us")
			b.ReportMetric(float64(maxCycle.Microseconds()), "max-new-segment-us")
			b.ReportMetric(float64(maxWall.Microseconds()), "max-wall-us")
			if os.Getenv("SEGBUF_VERBOSE") != "" {
				b.Logf("%d batches, %.1f segments, %d reallocations, %d bytes allocated", len(took), segments, reallocs, allocBytes)
			}
		})
	}
}
