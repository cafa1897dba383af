package bench

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marketd/bench/baseline"
	"marketd/internal/fstype"
	"marketd/wal"
)

// bareWriter is BenchmarkPipelineFloor's least log: one goroutine takes
// the calls the actors hand it, as many as are waiting at once (up to
// wal.DefaultMaxBatchRecords), writes their frames with one write(2) to a
// plain file, fsyncs it unless fsync is off, and answers them itself
// (baseline.GroupCommit, as the fsync-only handler). No log library, no
// sequence check, no segments, no directory fsync, no second goroutine for
// the answers: what a group commit cannot do without.
type bareWriter struct {
	seq            atomic.Uint64 // numbers the frames, as the log's Next would
	calls          chan *floorCall
	wg             sync.WaitGroup
	commits        int
	writing, fsync time.Duration // in the writes, in the fsyncs
}

// startBareWriter starts a bareWriter on a file in a temporary directory on
// the disk under test.
func startBareWriter(b *testing.B, fsync bool) *bareWriter {
	f := diskFile(b, "bare")
	w := &bareWriter{calls: make(chan *floorCall, wal.DefaultQueueRecords)}
	w.wg.Go(func() {
		baseline.GroupCommit(f, w.calls, wal.DefaultMaxBatchRecords, fsync, baseline.CommitOptions{},
			func(c *floorCall) []byte { return c.frame },
			func(c *floorCall, err error) { c.done <- err },
			func(c baseline.Commit) {
				w.commits++
				w.writing += c.Write
				w.fsync += c.Fsync
			})
	})
	return w
}

// diskFile creates the file name in a temporary directory on the disk
// under test, closed when the benchmark ends.
func diskFile(b *testing.B, name string) *os.File {
	f, err := os.Create(filepath.Join(fstype.DiskTempDir(b), name))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	})
	return f
}

// stop waits for the writer to answer every call handed to it and returns
// the number of commits it made and the time it spent in their writes and
// in their fsyncs. The actors must have stopped.
func (w *bareWriter) stop() (commits int, writing, fsync time.Duration) {
	close(w.calls)
	w.wg.Wait()
	return w.commits, w.writing, w.fsync
}
