package bench

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marketd/internal/fstype"
	"marketd/wal"
)

// bareWriter is BenchmarkPipelineFloor's least log: one goroutine takes
// the calls the actors hand it, as many as are waiting at once (up to
// wal.DefaultMaxBatchRecords), writes their frames with one write(2) to a
// plain file, fsyncs it unless fsync is off, and answers them itself. No
// log library, no sequence check, no segments, no directory fsync, no
// second goroutine for the answers: what a group commit cannot do without.
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
	f, err := os.Create(filepath.Join(fstype.DiskTempDir(b), "bare"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	})
	w := &bareWriter{calls: make(chan *floorCall, wal.DefaultQueueRecords)}
	w.wg.Go(func() {
		var buf []byte
		batch := make([]*floorCall, 0, wal.DefaultMaxBatchRecords)
		var failed error
		for call := range w.calls {
			batch = append(batch[:0], call)
		gather:
			for len(batch) < cap(batch) {
				select {
				case c, ok := <-w.calls:
					if !ok {
						break gather
					}
					batch = append(batch, c)
				default:
					break gather
				}
			}
			if failed == nil {
				buf = buf[:0]
				for _, c := range batch {
					buf = append(buf, c.frame...)
				}
				began := time.Now()
				_, failed = f.Write(buf)
				wrote := time.Now()
				w.writing += wrote.Sub(began)
				if failed == nil && fsync {
					failed = f.Sync()
					w.fsync += time.Since(wrote)
				}
			}
			w.commits++
			for _, c := range batch {
				c.done <- failed // nothing is retried after a failure
			}
		}
	})
	return w
}

// stop waits for the writer to answer every call handed to it and returns
// the number of commits it made and the time it spent in their writes and
// in their fsyncs. The actors must have stopped.
func (w *bareWriter) stop() (commits int, writing, fsync time.Duration) {
	close(w.calls)
	w.wg.Wait()
	return w.commits, w.writing, w.fsync
}
