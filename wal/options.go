package wal

import (
	"fmt"
	"log/slog"
	"time"

	"marketd/internal/vfs"
)

// Defaults of Options, used for fields left zero.
const (
	// DefaultSegmentSizeBytes is tidwall's segment size. Tidwall keeps the
	// whole current segment in memory; the writer gives it a buffer of the
	// full size up front and reuses it (segbuf.go), so the segment no
	// longer grows by reallocation (before that, the largest reallocation
	// took 14-18 ms of the writer's CPU at tidwall's default of 20 MiB,
	// 2-8 ms at 4 MiB and under 0.8 ms at 1 MiB: BenchmarkSegmentBuffer,
	// docs/PERFORMANCE.md). A new segment begins, inside a WriteBatch,
	// with an fsync of the full one and a file creation, and costs a
	// directory fsync: 0.7-0.8 ms of the writer at 1 MiB (about 3,600
	// trade records), 1.2-1.9 at 4 MiB. Tidwall also reads the whole last
	// segment into memory at Open and keeps the previous one in its cache,
	// so the log holds two or three buffers of this size.
	DefaultSegmentSizeBytes = 1 << 20
	// DefaultMaxBatchRecords bounds one commit. At 4096 records per fsync
	// the disk here sustains about 1.4M records/s (shared/notes).
	DefaultMaxBatchRecords = 4096
	// DefaultMaxBatchBytes bounds one commit's write: 4 MiB takes about a
	// millisecond to copy into the page cache.
	DefaultMaxBatchBytes = 4 << 20
	// DefaultQueueRecords bounds the records reserved by Next and not yet
	// written: 16 full batches, about 20 MB of typical records.
	DefaultQueueRecords = 65536
	// DefaultSlowFsync is the fsync duration past which a commit is logged
	// as slow, as etcd does.
	DefaultSlowFsync = time.Second
)

// Options configures a Log. The zero value is the safe production setting.
type Options struct {
	// NoFsync turns off every fsync of the commit path: records are
	// acknowledged once written to the page cache and are lost on a crash
	// of the machine. It is for benchmarks only, and Open logs a warning
	// saying so. Default false: a record is acknowledged only once it and
	// the directory entry of its segment are fsynced.
	//
	// It is NoFsync rather than Fsync because a boolean option that
	// defaults to true cannot be told apart from one left unset: an
	// Options{} literal would silently be the unsafe mode.
	NoFsync bool
	// SegmentSizeBytes is the size at which tidwall starts a new segment
	// file; a segment may run past it by one batch. Default
	// DefaultSegmentSizeBytes.
	SegmentSizeBytes int
	// MaxBatchRecords bounds the records of one commit (one write and one
	// fsync). Default DefaultMaxBatchRecords.
	MaxBatchRecords int
	// MaxBatchBytes bounds the frame bytes of one commit; a single record
	// larger than it is committed alone. Default DefaultMaxBatchBytes.
	MaxBatchBytes int
	// QueueRecords bounds the records reserved by Next and not yet written;
	// Next blocks while it is reached. Default DefaultQueueRecords.
	QueueRecords int
	// CommitInterval is the least time from the start of one commit to the
	// start of the next while many callers' records arrive: after a commit
	// of 2 to 15 records, the writer waits out the rest of the interval
	// before it gathers the next one, unless 16 records are already
	// waiting. Each fsync then serves more records, for the price of up to
	// the interval of latency: at 17,400 trades a second over 128
	// connections, 0.5 ms took the commits from about 3,000 to 1,600 a
	// second (a trial run) and the server's CPU per request from 55.0-56.6
	// to 49.5-52.9 us (docs/PERFORMANCE.md, "The commit interval"). A lone caller's
	// commits, of one record, never wait, nor does anything with NoFsync.
	// At most MaxCommitInterval; SetCommitInterval changes it while the
	// log runs. Default 0: no wait (marketd's -commit-interval sets it,
	// 1 ms by default, and -snapshot-commit-interval while a snapshot is
	// written).
	CommitInterval time.Duration
	// FsyncHoldsProcessor has the writer keep its processor while it
	// fsyncs the segment and while it waits out the commit interval, by
	// making those system calls raw (hold.go): the runtime's monitor then
	// neither takes the processor away on every commit nor keeps polling
	// every 20 us. In three alternating pairs of closed-loop runs the
	// server's CPU per trade request went from 42.0-45.7 us to 33.0-39.3
	// (docs/PERFORMANCE.md, "The writer's fsync on its own processor").
	// Set it only when GOMAXPROCS has a processor beyond the cores for the
	// writer (internal/procs.HasSpare): without one, every fsync takes a
	// core's processor from the other goroutines. A collector's
	// stop-the-world waits for the call to return: an fsync, or the rest
	// of a commit interval. Default false: the calls go through the
	// runtime. The directory's fsyncs and tidwall's fsync of a full
	// segment always do.
	FsyncHoldsProcessor bool
	// SlowFsync is the duration of one commit's fsyncs past which it is
	// logged as a warning. Default DefaultSlowFsync.
	SlowFsync time.Duration
	// Logger receives repairs, slow fsyncs, failures and the NoFsync
	// warning. Default slog.Default().
	Logger *slog.Logger
	// FS is the file system for the package's own file operations:
	// repair (read, copy aside, truncate, fsync), replay (read segments)
	// and directory fsyncs. Tidwall opens and writes its segment files
	// itself, through package os. Default vfs.Default().
	FS vfs.FS
	// Observer, when set, is told of every commit by the releaser goroutine,
	// after the commit's records are acknowledged; the metrics' histograms
	// are observed there, off the callers' path. Default: none.
	Observer Observer
}

// Observer receives a description of every commit. ObserveCommit runs on
// the releaser goroutine, after the commit's records are acknowledged: it
// must be quick and must not block, or it delays the next commit's
// answers (and, once releaseQueue commits wait, the writer).
type Observer interface {
	ObserveCommit(c Commit)
}

// Commit describes one commit of the writer.
type Commit struct {
	Records     int           // records in the commit
	Bytes       int           // frame bytes written
	First, Last uint64        // the seqs of its first and last records
	Began       time.Time     // when the write began, the records gathered
	Write       time.Duration // tidwall's WriteBatch: the copy into its segment buffer and the write (and a new segment's fsync and creation)
	Fsync       time.Duration // the fsyncs of the segment file and directory; 0 with NoFsync
	Took        time.Duration // from the write to the last acknowledgement sent
	// Held is how long the commit's first record was missing while a
	// later one was ready, as the writer saw it: a market actor between
	// Next and Append holds back every later record (docs/PERFORMANCE.md,
	// "The open loop's tail"). 0 when the writer met no such hole.
	Held time.Duration
	// Gathered is how long the writer waited, before this commit, for
	// more records to join it (Options.CommitInterval); 0 when it did not.
	Gathered time.Duration
}

// withDefaults returns o with zero fields set to their defaults, or an
// error naming a field that is out of range.
func (o Options) withDefaults() (Options, error) {
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"SegmentSizeBytes", &o.SegmentSizeBytes, DefaultSegmentSizeBytes},
		{"MaxBatchRecords", &o.MaxBatchRecords, DefaultMaxBatchRecords},
		{"MaxBatchBytes", &o.MaxBatchBytes, DefaultMaxBatchBytes},
		{"QueueRecords", &o.QueueRecords, DefaultQueueRecords},
	} {
		switch {
		case *f.v < 0:
			return o, fmt.Errorf("wal: options: %s is %d, want >= 0", f.name, *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	const maxQueueRecords = 1 << 24 // the slot ring is allocated up front
	if o.QueueRecords > maxQueueRecords {
		return o, fmt.Errorf("wal: options: QueueRecords is %d, limit %d", o.QueueRecords, maxQueueRecords)
	}
	if o.CommitInterval < 0 || o.CommitInterval > MaxCommitInterval {
		return o, fmt.Errorf("wal: options: CommitInterval is %v, want 0 to %v", o.CommitInterval, MaxCommitInterval)
	}
	if o.SlowFsync < 0 {
		return o, fmt.Errorf("wal: options: SlowFsync is %v, want >= 0", o.SlowFsync)
	}
	if o.SlowFsync == 0 {
		o.SlowFsync = DefaultSlowFsync
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FS == nil {
		o.FS = vfs.Default()
	}
	return o, nil
}
