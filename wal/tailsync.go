package wal

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// tailFile is the writer's own descriptor of tidwall's tail segment file,
// which it fsyncs with FsyncHolding when Options.FsyncHoldsProcessor is
// set: tidwall's own Sync goes through os.File.Sync, which the runtime
// sees (hold.go). An fsync of any descriptor of a file makes the whole
// file durable, whichever descriptor wrote it.
//
// The descriptor is opened by the path in tidwall's record of its tail
// (segbuf.go) and kept while that record and path stay the tail. A
// truncation may put another file under the same record and path (a
// rename in place, segtrack.go), so every reload of the segment tracker
// closes it first (segmentTracker.reload): the next fsync opens the file
// that is there then. Owned by the writer goroutine.
type tailFile struct {
	seg  *twSegment // the record whose file f is; nil when none is open
	path string
	f    *os.File
	rc   syscall.RawConn // f's, taken once (fsyncRaw)
}

// sync fsyncs tail's file, opening it first unless f is already it.
func (t *tailFile) sync(tail *twSegment) error {
	if t.f == nil || t.seg != tail || t.path != tail.path {
		if err := t.close(); err != nil {
			return err
		}
		f, err := os.Open(tail.path)
		if err != nil {
			return fmt.Errorf("open the tail segment to fsync it: %w", err)
		}
		rc, err := f.SyscallConn()
		if err != nil {
			return fmt.Errorf("the tail segment's descriptor: %w", errors.Join(err, f.Close()))
		}
		t.seg, t.path, t.f, t.rc = tail, tail.path, f, rc
	}
	return fsyncRaw(t.rc, t.path)
}

// close closes the descriptor, if one is open.
func (t *tailFile) close() error {
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.seg, t.path, t.f, t.rc = nil, "", nil, nil
	if err != nil {
		return fmt.Errorf("close the tail segment's descriptor: %w", err)
	}
	return nil
}

// syncTail fsyncs the segment file the commit wrote to: tidwall's tail,
// through the writer's own descriptor when the option says so and
// tidwall's record is known, else by tidwall's Sync.
func (l *Log) syncTail() error {
	if l.holdsProcessor() {
		if tail := l.segBuf.tailSegment(); tail != nil {
			return l.tail.sync(tail)
		}
	}
	return l.tw.Sync()
}

// holdsProcessor reports whether the writer's blocking calls keep its
// processor now: with Options.FsyncHoldsProcessor, unless a caller of
// FsyncThroughRuntime has not restored it yet.
func (l *Log) holdsProcessor() bool {
	return l.opts.FsyncHoldsProcessor && l.throughRuntime.Load() == 0
}

// FsyncThroughRuntime has the writer's fsyncs and commit-interval waits go
// through the runtime, as without Options.FsyncHoldsProcessor, until
// restore is called (calls nest: each restore undoes its own call, and a
// second call of one restore does nothing). A snapshot's writes stretch
// the log's fsyncs to tens of milliseconds, and a stop-the-world of the
// collector, which a snapshot's allocations set off, would wait that long
// for a writer that holds its processor with every other goroutine
// stopped (docs/PERFORMANCE.md, "The log's fsync without a hand-off:
// tried and dropped"); the snapshot manager calls it around each snapshot.
func (l *Log) FsyncThroughRuntime() (restore func()) {
	l.throughRuntime.Add(1)
	var once sync.Once
	return func() { once.Do(func() { l.throughRuntime.Add(-1) }) }
}
