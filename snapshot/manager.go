package snapshot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"marketd/core"
	"marketd/internal/vfs"
)

// Defaults of Options.
const (
	DefaultEveryRecords = 1_000_000
	DefaultEvery        = 5 * time.Minute
	DefaultChunkObjects = 4096
)

// Log is what the manager needs of the write-ahead log; *wal.Log has it.
type Log interface {
	Durability
	// Durable returns the highest sequence number durable so far.
	Durable() uint64
	// FirstSeq returns the sequence number of the first record kept.
	FirstSeq() uint64
	// TruncateFront drops the records before seq.
	TruncateFront(ctx context.Context, seq uint64) error
}

// Options configures a Manager; zero fields take their defaults.
type Options struct {
	Dir string
	// EveryRecords: a snapshot is taken once the log has grown by this many
	// records since the last one. Default DefaultEveryRecords.
	EveryRecords uint64
	// Every: a snapshot is taken at least this often when anything changed.
	// Default DefaultEvery.
	Every time.Duration
	// ChunkObjects bounds the objects of one chunk. Default
	// DefaultChunkObjects.
	ChunkObjects int
	// CPUShare is the share of one core a snapshot taken by Run may use:
	// below 1 it rests after each chunk for as long as that needs
	// (pace.go). Default DefaultCPUShare (1: no rest). Take, used at
	// shutdown when nothing trades, never rests.
	CPUShare float64
	// CommitInterval is the log's commit interval (wal.Options) while
	// Run's snapshot is written and the log trimmed, when the log can set
	// one (intervalSetter) and the log's own is shorter; the log's own is
	// set back after. The snapshot takes about a core, and each fsync
	// the log saves leaves the trades more of what remains
	// (docs/PERFORMANCE.md, "The commit interval"). Default 0: the log's
	// own.
	CommitInterval time.Duration
	// ThreadNice is the nice value at which Run's snapshots walk, encode
	// and write the accounts, on a thread of their own (priority.go;
	// Linux only; clamped to 0-MaxThreadNice). Default 0: the process's
	// priority. Take, used at shutdown and for backups, runs at the
	// caller's.
	ThreadNice int
	Now        func() time.Time // default time.Now
	Logger     *slog.Logger     // default slog.Default()
	FS         vfs.FS           // default vfs.Default()
}

// Manager takes snapshots of a running state and trims the log behind them.
// Take may be called from any goroutine; takes are serialized.
type Manager struct {
	opts Options
	st   *core.State
	log  Log

	mu   sync.Mutex             // serializes Take
	last atomic.Pointer[Header] // the newest snapshot in place; nil: none
	// niceWarned: the accounts' priority could not be lowered, and the
	// log said so once (under mu).
	niceWarned bool

	taken, failed   atomic.Uint64
	lastTookNanos   atomic.Int64
	lastSizeBytes   atomic.Int64
	lastGoodAtNanos atomic.Int64 // when the newest snapshot in place was written; 0: none
}

// Stats are a Manager's counters since it was made, for the metrics.
type Stats struct {
	Taken  uint64 // snapshots written by Take
	Failed uint64 // Takes that failed
	// LastTook and LastSizeBytes describe the last snapshot written (zero
	// before the first).
	LastTook      time.Duration
	LastSizeBytes int64
	// LastGoodAt is when the newest snapshot in place was written,
	// recovery's included; zero when there is none.
	LastGoodAt time.Time
}

// Stats returns the manager's counters. Each is read atomically; the set
// is not one consistent cut.
func (m *Manager) Stats() Stats {
	st := Stats{
		Taken:         m.taken.Load(),
		Failed:        m.failed.Load(),
		LastTook:      time.Duration(m.lastTookNanos.Load()),
		LastSizeBytes: m.lastSizeBytes.Load(),
	}
	if at := m.lastGoodAtNanos.Load(); at != 0 {
		st.LastGoodAt = time.Unix(0, at)
	}
	return st
}

// NewManager returns a manager for st and its log. last is the snapshot
// recovery started from, if any (Recover returns it).
func NewManager(st *core.State, log Log, opts Options, last *Header) *Manager {
	opts.EveryRecords = cmp.Or(opts.EveryRecords, DefaultEveryRecords)
	opts.Every = cmp.Or(opts.Every, DefaultEvery)
	if opts.ChunkObjects <= 0 {
		opts.ChunkObjects = DefaultChunkObjects
	}
	if opts.CPUShare <= 0 {
		opts.CPUShare = DefaultCPUShare
	}
	opts.ThreadNice = min(max(opts.ThreadNice, 0), MaxThreadNice)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	if opts.FS == nil {
		opts.FS = vfs.Default()
	}
	m := &Manager{opts: opts, st: st, log: log}
	if last != nil {
		h := *last
		m.last.Store(&h)
		m.lastGoodAtNanos.Store(h.CreatedAt.UnixNano())
	}
	return m
}

// Last returns the newest snapshot in place, if any. It does not wait for a
// snapshot being taken.
func (m *Manager) Last() (Header, bool) {
	if h := m.last.Load(); h != nil {
		return *h, true
	}
	return Header{}, false
}

// Take writes a snapshot now (over the spare, if there is one), unless
// nothing became durable since the last one, then trims the log up to the
// previous snapshot's From and deletes the snapshots older than the
// previous one. It returns the header of the newest snapshot in place.
func (m *Manager) Take(ctx context.Context) (Header, error) {
	return m.take(ctx, nil, 0)
}

// take is Take, resting after each chunk as pace says (nil: never), with
// the log's commit interval in force while it runs (0: none, or not
// known) for the log line.
func (m *Manager) take(ctx context.Context, pace *pacer, interval time.Duration) (Header, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	from := m.log.Durable()
	if last := m.last.Load(); last != nil && from == last.From {
		return *last, nil
	}
	// The snapshot's writes stretch the log's fsyncs: the writer gives its
	// processor back during them until the snapshot and its retention are
	// done (see fsyncThroughRuntime).
	defer m.fsyncThroughRuntime()()
	start := m.opts.Now()
	h, size, err := write(ctx, m.opts.FS, m.opts.Dir, m.st, m.log, from, start, m.opts.ChunkObjects, pace, m.sparePath())
	if pace != nil && pace.niceErr != nil && !m.niceWarned {
		m.niceWarned = true
		m.opts.Logger.Warn("snapshot: the accounts are walked at the process's priority", "err", pace.niceErr)
	}
	if err != nil {
		m.failed.Add(1)
		return Header{}, err
	}
	took := m.opts.Now().Sub(start)
	m.last.Store(&h)
	m.taken.Add(1)
	m.lastTookNanos.Store(int64(took))
	m.lastSizeBytes.Store(size)
	m.lastGoodAtNanos.Store(h.CreatedAt.UnixNano())
	var rested, longest time.Duration
	var niced int
	if pace != nil {
		rested, longest, niced = pace.rested, pace.longest, pace.niced
	}
	m.opts.Logger.Info("snapshot written", "from", h.From, "through", h.Through, "chunks", h.Chunks,
		"bytes", size, "took", took, "rested", rested, "longest_work", longest, "commit_interval", interval,
		"thread_nice", niced)
	return h, m.retain(ctx, h, pace != nil)
}

// sparePath is where a paced retention keeps the old snapshot it would
// delete, for the next snapshot to be written over (createTemp). Listing
// ignores it, and recovery keeps it (removeTemps): at most one file of a
// snapshot's size beside the newest two.
func (m *Manager) sparePath() string { return filepath.Join(m.opts.Dir, spareName) }

// retain keeps the newest snapshot and the one before it, with the log
// from the previous one's From+1 on; paced, as trading goes on (trimLog),
// and keeping the newest of the older ones as the spare.
func (m *Manager) retain(ctx context.Context, newest Header, paced bool) error {
	froms, err := list(m.opts.FS, m.opts.Dir)
	if err != nil {
		return err
	}
	var older []uint64 // snapshots older than the newest, newest first
	for _, f := range froms {
		if f < newest.From {
			older = append(older, f)
		}
	}
	if len(older) == 0 {
		return nil
	}
	prev := older[0]
	start := m.opts.Now()
	held, err := m.trimLog(ctx, prev+1, paced)
	if err != nil {
		return err
	}
	trimmed := m.opts.Now()
	var errs []error
	removed, spared := 0, 0
	for i, f := range older[1:] {
		old := filepath.Join(m.opts.Dir, fileName(f))
		if paced && i == 0 {
			// Kept as the next snapshot's spare instead of freed (createTemp):
			// freeing 150-210 MB held the log's fsyncs up to 36 ms.
			if err := m.opts.FS.Rename(old, m.sparePath()); err != nil {
				errs = append(errs, fmt.Errorf("snapshot: keep old snapshot as a spare: %w", err))
			} else {
				spared++
			}
			continue
		}
		if err := m.opts.FS.Remove(old); err != nil {
			errs = append(errs, fmt.Errorf("snapshot: remove old snapshot: %w", err))
		} else {
			removed++
		}
	}
	// The phases' times, to line them up with the slowest requests of a
	// load run (docs/PERFORMANCE.md, "The second after a snapshot").
	// A paced trim stops at the last segment end at or below prev+1
	// (trimPoint), so the log's first record is logged, not the target.
	// trim_took includes the rests between the dropped files' removals;
	// trim_writer_held is the part that held up commits.
	m.opts.Logger.Info("log trimmed and old snapshots removed", "target", prev+1, "first_kept", m.log.FirstSeq(),
		"trim_took", trimmed.Sub(start), "trim_writer_held", held,
		"removed", removed, "spared", spared, "remove_took", m.opts.Now().Sub(trimmed))
	return errors.Join(errs...)
}

// Trimming the log while trading goes on (docs/PERFORMANCE.md, "The
// snapshot's second"). The log's writer goroutine carries out a
// truncation, and no commit is written meanwhile. Its cost is mostly fixed:
// tidwall reads the segment holding the new first record, writes the part
// it keeps to a new file and fsyncs it, and the log fsyncs the directory;
// each segment file dropped only loses a name there (wal.Log.TrimFront), so
// dropping 35 files costs the writer little more than dropping one. A
// periodic snapshot's trim is therefore one truncation, cut at the end of a
// segment (trimPoint), and the files it drops are freed afterwards on this
// goroutine, one every trimUnlinkRest. It was 35-36 truncations of about
// 8,192 records each, with 20 ms rests: as many times the writer's fixed
// cost, about one second of commits held up for 7-23 ms at a time.
const trimUnlinkRest = 10 * time.Millisecond

// trimmer is a Log that frees a truncation's files with rests and says how
// long its writer was held; *wal.Log is one.
type trimmer interface {
	TrimFront(ctx context.Context, seq uint64, rest time.Duration) (held time.Duration, err error)
}

// trimLog drops the log's records before seq; while trading goes on
// (paced), only those before the last segment end at or before seq
// (trimPoint), freeing the dropped files with rests. held is how long the
// log's writer spent on it, when the log says (trimmer).
func (m *Manager) trimLog(ctx context.Context, seq uint64, paced bool) (held time.Duration, err error) {
	at := seq
	if paced {
		var ok bool
		if at, ok = m.trimPoint(seq); !ok {
			return 0, nil
		}
	}
	if t, ok := m.log.(trimmer); ok && paced {
		held, err = t.TrimFront(ctx, at, trimUnlinkRest)
	} else {
		err = m.log.TruncateFront(ctx, at)
	}
	if err != nil {
		return held, fmt.Errorf("snapshot: trim the log to %d: %w", at, err)
	}
	return held, nil
}

// segmentedLog is a Log that lists where its segments begin; *wal.Log is
// one.
type segmentedLog interface {
	SegmentStarts() ([]uint64, error)
}

// trimPoint returns where a trim to seq while trading cuts the log: the
// last record of a segment, the last such at or before seq, when the log
// lists its segments (segmentEnd), else seq. It reports false when there
// is nothing to drop.
func (m *Manager) trimPoint(seq uint64) (uint64, bool) {
	first := m.log.FirstSeq()
	if seq <= first {
		return 0, false
	}
	if sl, ok := m.log.(segmentedLog); ok {
		if starts, err := sl.SegmentStarts(); err == nil {
			return segmentEnd(first, seq, starts)
		}
	}
	return seq, true
}

// segmentEnd returns the last record of a segment, the last such past
// first and at or before seq, of a log whose segments begin at starts. The
// log's truncation rewrites what it keeps of the segment holding the new
// first record: one record there, up to a whole segment, written and
// fsynced while no commit is written, anywhere else (wal.Log.SegmentStarts).
// The records before seq in the segment holding it stay until the next
// trim. It reports false when no segment ends there.
func segmentEnd(first, seq uint64, starts []uint64) (uint64, bool) {
	end := uint64(0)
	for _, s := range starts {
		if s < 2 {
			continue
		}
		if c := s - 1; c > first && c <= seq {
			end = max(end, c)
		}
	}
	return end, end != 0
}

// Run takes a snapshot every Every, or sooner once EveryRecords records
// were logged since the last one, until ctx is done, each paced to use at
// most CPUShare of one core and trimming the log as trading goes on
// (trimLog). Failures are logged and retried at the next
// turn: the log still holds everything.
func (m *Manager) Run(ctx context.Context) {
	tick := min(m.opts.Every, time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	lastAt := m.opts.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		last, _ := m.Last()
		grown := m.log.Durable() - min(m.log.Durable(), last.From)
		if grown == 0 || (grown < m.opts.EveryRecords && m.opts.Now().Sub(lastAt) < m.opts.Every) {
			continue
		}
		lastAt = m.opts.Now()
		interval, restore := m.raiseCommitInterval()
		_, err := m.take(ctx, newPacer(m.opts.CPUShare, m.opts.ThreadNice), interval)
		restore()
		if err != nil && ctx.Err() == nil {
			m.opts.Logger.Error("snapshot failed; the log keeps everything", "err", err)
		}
	}
}

// list returns the From of every snapshot file in dir, newest first.
func list(fsys vfs.FS, dir string) ([]uint64, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot: list %s: %w", dir, err)
	}
	var froms []uint64
	for _, e := range ents {
		if f, ok := parseName(e.Name()); ok {
			froms = append(froms, f)
		}
	}
	slices.Sort(froms)
	slices.Reverse(froms)
	return froms, nil
}

// intervalSetter is a Log whose commit interval can be raised and set
// while it runs; *wal.Log is one.
type intervalSetter interface {
	RaiseCommitInterval(d time.Duration) (prev time.Duration, raised bool, err error)
	SetCommitInterval(d time.Duration) (prev time.Duration, err error)
}

// runtimeSyncer is a Log whose writer can be told to fsync through the
// runtime for a while; *wal.Log is one.
type runtimeSyncer interface {
	FsyncThroughRuntime() (restore func())
}

// fsyncThroughRuntime has the log's writer give its processor back during
// its fsyncs while a snapshot is written (take), when the log can (see
// wal.Log.FsyncThroughRuntime), and returns what undoes it.
func (m *Manager) fsyncThroughRuntime() (restore func()) {
	if ls, ok := m.log.(runtimeSyncer); ok {
		return ls.FsyncThroughRuntime()
	}
	return func() {}
}

// raiseCommitInterval sets the log's commit interval to CommitInterval for
// a snapshot of Run's, when the log can and its own is shorter. It
// returns the interval in force during the snapshot (the log's own when
// it is not raised, which marketd's -commit-interval makes 1 ms by
// default; 0: none, or a log that cannot say) and what sets the log's own
// back.
func (m *Manager) raiseCommitInterval() (interval time.Duration, restore func()) {
	ls, ok := m.log.(intervalSetter)
	if !ok {
		return 0, func() {}
	}
	// Without CommitInterval this raises nothing and reads the log's own.
	prev, raised, err := ls.RaiseCommitInterval(m.opts.CommitInterval)
	if err != nil {
		m.opts.Logger.Warn("snapshot: the log's commit interval was not raised", "err", err)
		return 0, func() {}
	}
	if !raised {
		return prev, func() {}
	}
	return m.opts.CommitInterval, func() { _, _ = ls.SetCommitInterval(prev) } // in range: it was the log's
}
