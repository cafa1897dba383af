package wal

import (
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	tidwall "github.com/tidwall/wal"

	"marketd/core"
	"marketd/internal/vfs"
)

// Log is a write-ahead log of core records with group commit. It
// implements core.Journal. See the package comment for the pipeline.
type Log struct {
	dir    string
	opts   Options
	logger *slog.Logger

	// Owned by the goroutine that called Open until Start, then by the
	// writer goroutine until it exits, then by Close.
	tw        *tidwall.Log
	dirFile   vfs.File      // the log directory, kept open for its fsyncs
	batch     tidwall.Batch // reused for every commit
	batchData []byte        // the batch's own buffer while it holds staged frames (staged.go)
	pending   []*entry      // the records of the commit in progress
	writeNext uint64        // the next seq to write
	// holeSince is when the writer first found writeNext's record missing
	// with a later one ready (zero: no such hole now); see noteHole.
	holeSince time.Time
	// lastBegan is when the last commit began, and gatherWait the wait
	// for the commit interval since it (gather.go).
	lastBegan  time.Time
	gatherWait time.Duration
	seg        segmentTracker
	tail       tailFile       // the tail segment's own descriptor (tailsync.go)
	segBuf     segmentBuffers // tidwall's tail segment buffer, sized once (segbuf.go)

	// Published by the writer goroutine (or by Open), read by anyone.
	firstSeq atomic.Uint64
	lastSeq  atomic.Uint64 // last seq written to the log file
	durable  atomic.Uint64 // last seq fsynced (written, with NoFsync)
	// commitInterval is Options.CommitInterval until SetCommitInterval
	// changes it, in nanoseconds (gather.go).
	commitInterval atomic.Int64
	// throughRuntime counts the FsyncThroughRuntime calls not yet
	// restored (tailsync.go).
	throughRuntime atomic.Int32
	failErr        atomic.Pointer[error]
	failedCh       chan struct{}         // closed by fail, once
	final          atomic.Pointer[error] // set when the writer has stopped for good
	counters       counters

	// Reservations (journal.go). reservedSeq is the last seq handed out by
	// Next, with stopBit set once Close began or the log failed; released
	// is the seq up to which records no longer count against QueueRecords.
	// mu guards closed and failed and the waits on cond; it is never held
	// with waitMu. The writer takes it after a commit only when a Next
	// waits for room (waiters > 0).
	reservedSeq atomic.Uint64
	released    atomic.Uint64
	waiters     atomic.Int64
	mu          sync.Mutex
	cond        sync.Cond // signalled when released grows, or on failure or close
	closed      bool
	failed      error

	// Hand-over from Append to the writer: the record for seq sits in
	// slots[seq&slotMask] from Append until the writer takes it. The ring
	// holds at least QueueRecords slots, so two seqs in flight never share
	// one.
	slots    []atomic.Pointer[entry]
	slotMask uint64
	kick     chan struct{} // capacity 1: "a slot was filled"
	entries  sync.Pool     // *entry, recycled by the releaser

	// Hand-over from the writer to the releaser (writer.go): durable
	// commits to acknowledge, and their emptied entry lists coming back.
	releases    chan releasedCommit
	freeEntries chan []*entry

	// WaitDurable's wake-up: closed and replaced after every commit.
	waitMu   sync.Mutex
	waitChan chan struct{}

	truncReqs chan truncRequest
	stop      chan struct{} // closed by Close
	exited    chan struct{} // closed by the writer when it returns
	startOnce sync.Once
	started   atomic.Bool
}

// entry is one record in flight from Append to its acknowledgement.
type entry struct {
	seq   uint64
	frame []byte
	done  chan<- error
}

// maxPooledFrameBytes is the largest frame buffer kept for reuse, so that a
// rare huge record does not pin its buffer in the pool.
const maxPooledFrameBytes = 64 << 10

// stopBit marks reservedSeq once Close began or the log failed: a
// compare-and-swap by Next from an unmarked value then fails, so no seq is
// handed out after either. Seqs never reach it.
const stopBit = 1 << 63

var _ core.Journal = (*Log)(nil)

// Open opens the log in dir, creating it when missing. Before tidwall opens
// the files it cuts a torn tail of the last segment (see repair) and refuses
// other damage there with an error wrapping ErrCorrupt; damage in older
// segments is found by Replay. The log is then ready for Replay; Start
// begins writing.
func Open(dir string, opts Options) (*Log, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	fsys := o.FS
	if err := fsys.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("wal: open: create %s: %w", dir, err)
	}
	if !o.NoFsync {
		// A log directory created just now must be durable in its parent.
		if err := vfs.SyncDir(fsys, filepath.Dir(filepath.Clean(dir))); err != nil {
			return nil, fmt.Errorf("wal: open: %w", err)
		}
	}
	rep, err := repair(fsys, dir, o.Logger)
	if err != nil {
		return nil, err
	}
	if err := removeTrimLinks(dir); err != nil {
		return nil, fmt.Errorf("wal: open: %w", err)
	}

	tw, err := tidwall.Open(dir, &tidwall.Options{
		NoSync:           true, // the writer fsyncs once per commit itself
		SegmentSize:      o.SegmentSizeBytes,
		LogFormat:        tidwall.Binary,
		SegmentCacheSize: 1,    // segments are read by Replay, not by tidwall; see Options
		AllowEmpty:       true, // see firstLastSeq
		DirPerms:         0o750,
		FilePerms:        0o640,
	})
	if err != nil {
		if errors.Is(err, tidwall.ErrCorrupt) {
			return nil, fmt.Errorf("wal: open %s: %w: %w", dir, ErrCorrupt, err)
		}
		return nil, fmt.Errorf("wal: open %s: %w", dir, err)
	}
	l, err := newLog(dir, o, tw)
	if err != nil {
		return nil, errors.Join(err, closeTidwall(tw))
	}
	l.counters.tornRepairs.Add(b2u(rep.repaired))
	l.counters.tornBytesCut.Add(uint64(rep.cutBytes))
	if o.NoFsync {
		o.Logger.Warn("wal: FSYNC IS OFF: records are acknowledged before they are durable and a crash loses them; use only for benchmarks",
			"dir", dir)
	}
	return l, nil
}

func newLog(dir string, o Options, tw *tidwall.Log) (*Log, error) {
	first, last, err := firstLastSeq(tw)
	if err != nil {
		return nil, fmt.Errorf("wal: open %s: %w", dir, err)
	}
	dirFile, err := o.FS.OpenDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: open directory %s: %w", dir, err)
	}
	if !o.NoFsync {
		// Tidwall may have created the first segment or finished a
		// truncation by renaming files, and it never fsyncs a directory.
		if err := dirFile.Sync(); err != nil {
			return nil, errors.Join(fmt.Errorf("wal: sync directory %s: %w", dir, err), dirFile.Close())
		}
	}
	ringSize := uint64(1) << bits.Len(uint(o.QueueRecords-1))
	l := &Log{
		dir:         dir,
		opts:        o,
		logger:      o.Logger,
		tw:          tw,
		dirFile:     dirFile,
		writeNext:   last + 1,
		slots:       make([]atomic.Pointer[entry], ringSize),
		slotMask:    ringSize - 1,
		kick:        make(chan struct{}, 1),
		releases:    make(chan releasedCommit, releaseQueue),
		freeEntries: make(chan []*entry, releaseQueue+1),
		waitChan:    make(chan struct{}),
		truncReqs:   make(chan truncRequest),
		stop:        make(chan struct{}),
		exited:      make(chan struct{}),
		failedCh:    make(chan struct{}),
	}
	l.cond.L = &l.mu
	l.segBuf = newSegmentBuffers(tw, o.SegmentSizeBytes)
	l.segBuf.install()
	l.entries.New = func() any { return new(entry) }
	l.firstSeq.Store(first)
	l.lastSeq.Store(last)
	l.durable.Store(last)
	l.commitInterval.Store(int64(o.CommitInterval))
	l.reservedSeq.Store(last)
	l.released.Store(last)
	return l, nil
}

// firstLastSeq reads tidwall's bounds. The log is opened with AllowEmpty so
// that a log whose every record was cut or truncated away still opens (a
// lone empty segment NAME otherwise fails with ErrEmptyLog) and reports its
// bounds the same way in every case: empty means first == last+1.
func firstLastSeq(tw *tidwall.Log) (first, last uint64, err error) {
	if first, err = tw.FirstIndex(); err != nil {
		return 0, 0, err
	}
	if last, err = tw.LastIndex(); err != nil {
		return 0, 0, err
	}
	if first == 0 || first > last+1 {
		return 0, 0, fmt.Errorf("tidwall reports first index %d, last %d: %w", first, last, ErrCorrupt)
	}
	return first, last, nil
}

func closeTidwall(tw *tidwall.Log) error {
	if err := tw.Close(); err != nil {
		return fmt.Errorf("wal: close log: %w", err)
	}
	return nil
}

// FirstSeq returns the sequence number of the first record in the log.
// When the log is empty it is LastSeq()+1: the number the next record gets.
func (l *Log) FirstSeq() uint64 { return l.firstSeq.Load() }

// LastSeq returns the sequence number of the last record written to the
// log, 0 when none ever was. With fsync on, it is durable once the commit
// that wrote it returns; see Durable.
func (l *Log) LastSeq() uint64 { return l.lastSeq.Load() }

// Durable returns the sequence number up to which every record is durable.
func (l *Log) Durable() uint64 { return l.durable.Load() }

// Err returns the error that stopped the log (wrapping ErrFailed), or nil.
func (l *Log) Err() error {
	if p := l.failErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Failed returns a channel closed when the log fails (Err is set by then),
// so that the process can stop at once rather than notice later.
func (l *Log) Failed() <-chan struct{} { return l.failedCh }

// Start starts the writer goroutine, which owns the log files from then on.
// Call Replay, if needed, before Start. Start is idempotent; Close stops the
// writer.
func (l *Log) Start() {
	l.startOnce.Do(func() {
		l.started.Store(true)
		go l.run()
	})
}

// Close stops new reservations (Next fails with ErrClosed), writes and
// fsyncs every record appended in sequence order without a gap, stops the
// writer and closes the files. A record whose Append comes later, or that
// follows a reserved number never appended, gets ErrClosed on its done
// channel. Close returns the log's failure, if it had one, with any error
// from closing the files.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return fmt.Errorf("wal: close: %w", ErrClosed)
	}
	l.closed = true
	l.stopReservations()
	l.mu.Unlock()

	l.Start() // records appended before Start are written too
	close(l.stop)
	<-l.exited
	// The writer has returned: the files are this goroutine's again.
	errs := []error{l.Err(), l.tail.close(), closeTidwall(l.tw)}
	if err := l.dirFile.Close(); err != nil {
		errs = append(errs, fmt.Errorf("wal: close directory %s: %w", l.dir, err))
	}
	return errors.Join(errs...)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
