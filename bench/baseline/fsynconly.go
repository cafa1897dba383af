package baseline

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/valyala/fasthttp"
)

const (
	// RecordBytes is the size of what the fsync-only handler writes per
	// request: about a trade record's frame.
	RecordBytes = 300
	// FileName is the file the fsync-only handler appends to, in the
	// directory given.
	FileName = "fsync-only"
	// maxWaiting bounds the requests waiting for the next group commit;
	// a handler that finds the queue full waits for room, as marketd's
	// callers wait on its log's queue.
	maxWaiting = 4096
)

// ServeFsyncOnly serves the fsync-only handler on ln until Close: one
// goroutine gathers the waiting requests, writes RecordBytes for each in
// one write to dir/FileName (created or truncated), fsyncs the file once
// and releases them. There is no log library, no frame, no encoding, no
// directory fsync: it is the least any handler must do to answer only
// after its record is fsynced. dir must be on the disk under test (not
// tmpfs), as marketd's data directory. It commits as co says: with a
// commit interval it waits between commits as marketd's log does with its
// own, and it may keep its processor through the fsync (GroupCommit).
func ServeFsyncOnly(ln net.Listener, dir string, co CommitOptions) (*Server, error) {
	f, err := os.Create(filepath.Join(dir, FileName))
	if err != nil {
		return nil, fmt.Errorf("baseline: create the fsync-only file: %w", err)
	}
	waiting := make(chan chan error, maxWaiting)
	var wg sync.WaitGroup
	record := make([]byte, RecordBytes)
	wg.Go(func() {
		GroupCommit(f, waiting, maxWaiting, true, co, func(chan error) []byte { return record },
			func(done chan error, err error) { done <- err }, nil)
	})
	release := func() error { // after the server's shutdown: no more senders
		close(waiting)
		wg.Wait()
		return errors.Join(f.Close(), os.Remove(f.Name()))
	}
	return serve(ln, "fsync-only", func(ctx *fasthttp.RequestCtx) {
		done := make(chan error, 1)
		waiting <- done
		if err := <-done; err != nil {
			ctx.Error(`{"error":"fsync failed"}`, fasthttp.StatusInternalServerError)
			return
		}
		AnswerNoop(ctx)
	}, release), nil
}
