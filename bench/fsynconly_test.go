package bench

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"marketd/internal/fstype"
)

// fsyncRecordBytes is the size of what the fsync-only server writes per
// request: about a trade record's frame.
const fsyncRecordBytes = 300

// startFsyncOnly serves a fasthttp handler that waits for a group commit
// to a plain file and does nothing else: one goroutine gathers the waiting
// requests, writes fsyncRecordBytes for each in one write, fsyncs the file
// once and releases them. There is no tidwall, no frame, no encoding, no
// directory fsync: it is the least any handler must do to answer only
// after its record is fsynced, so its throughput bounds every such
// endpoint on this machine, whatever its log.
func startFsyncOnly(b *testing.B) string {
	b.Helper()
	f, err := os.Create(filepath.Join(fstype.DiskTempDir(b), "fsync-only"))
	if err != nil {
		b.Fatal(err)
	}
	waiting := make(chan chan error, 4096)
	var wg sync.WaitGroup
	wg.Go(func() { groupCommit(f, waiting) })
	b.Cleanup(func() { // after the server's shutdown
		close(waiting)
		wg.Wait()
		if err := f.Close(); err != nil {
			b.Errorf("close: %v", err)
		}
	})
	return serveHandler(b, "fsync-only", func(ctx *fasthttp.RequestCtx) {
		done := make(chan error, 1)
		waiting <- done
		if err := <-done; err != nil {
			ctx.Error(`{"error":"fsync failed"}`, fasthttp.StatusInternalServerError)
			return
		}
		answerNoop(ctx)
	})
}

// groupCommit releases each request of waiting after a write and an fsync
// that cover it, one write and one fsync for all the requests waiting at
// once, until waiting is closed.
func groupCommit(f *os.File, waiting chan chan error) {
	record := make([]byte, fsyncRecordBytes)
	var buf []byte
	var batch []chan error
	for done := range waiting {
		batch = append(batch[:0], done)
	more:
		for {
			select {
			case d, ok := <-waiting:
				if !ok {
					break more
				}
				batch = append(batch, d)
			default:
				break more
			}
		}
		buf = buf[:0]
		for range batch {
			buf = append(buf, record...)
		}
		_, err := f.Write(buf)
		if err == nil {
			err = f.Sync()
		}
		for _, d := range batch {
			d <- err
		}
	}
}
