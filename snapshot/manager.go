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
	Now      func() time.Time // default time.Now
	Logger   *slog.Logger     // default slog.Default()
	FS       vfs.FS           // default vfs.Default()
}

// Manager takes snapshots of a running state and trims the log behind them.
// Take may be called from any goroutine; takes are serialized.
type Manager struct {
	opts Options
	st   *core.State
	log  Log

	mu   sync.Mutex             // serializes Take
	last atomic.Pointer[Header] // the newest snapshot in place; nil: none

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

// Take writes a snapshot now, unless nothing became durable since the last
// one, then trims the log up to the previous snapshot's From and deletes
// the snapshots older than the previous one. It returns the header of the
// newest snapshot in place.
func (m *Manager) Take(ctx context.Context) (Header, error) {
	return m.take(ctx, nil)
}

// take is Take, resting after each chunk as pace says (nil: never).
func (m *Manager) take(ctx context.Context, pace *pacer) (Header, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	from := m.log.Durable()
	if last := m.last.Load(); last != nil && from == last.From {
		return *last, nil
	}
	start := m.opts.Now()
	h, size, err := write(ctx, m.opts.FS, m.opts.Dir, m.st, m.log, from, start, m.opts.ChunkObjects, pace)
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
	var rested time.Duration
	if pace != nil {
		rested = pace.rested
	}
	m.opts.Logger.Info("snapshot written", "from", h.From, "through", h.Through, "chunks", h.Chunks,
		"bytes", size, "took", took, "rested", rested)
	return h, m.retain(ctx, h, pace != nil)
}

// retain keeps the newest snapshot and the one before it, with the log
// from the previous one's From+1 on; stepped, the log is trimmed in steps
// (trimLog).
func (m *Manager) retain(ctx context.Context, newest Header, stepped bool) error {
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
	steps, longest, err := m.trimLog(ctx, prev+1, stepped)
	if err != nil {
		return err
	}
	trimmed := m.opts.Now()
	var errs []error
	for _, f := range older[1:] {
		if err := m.opts.FS.Remove(filepath.Join(m.opts.Dir, fileName(f))); err != nil {
			errs = append(errs, fmt.Errorf("snapshot: remove old snapshot: %w", err))
		}
	}
	// The phases' times, to line them up with the slowest requests of a
	// load run (docs/PERFORMANCE.md, "The second after a snapshot").
	// A stepped trim stops at the last segment end at or below prev+1
	// (trimPoints), so the log's first record is logged, not the target.
	m.opts.Logger.Info("log trimmed and old snapshots removed", "target", prev+1, "first_kept", m.log.FirstSeq(), "trim_steps", steps,
		"trim_took", trimmed.Sub(start), "trim_longest_step", longest,
		"removed", len(older)-1, "remove_took", m.opts.Now().Sub(trimmed))
	return errors.Join(errs...)
}

// Trimming the log in steps (docs/PERFORMANCE.md, "The snapshot while
// trading"). The log's writer goroutine carries out a truncation, and
// while it unlinks the segments before the new first record and rewrites
// the segment holding it, no commit is written: in an execution trace of
// an open loop with snapshots of 1,000,000 accounts, about 25 unlinks in a
// row held the writer for about 65 ms. A snapshot taken while trading goes
// on trims the log a few segments at a time, resting between steps so
// that commits go on.
const (
	// trimStepRecords is one step: two to three 1 MiB segments of trade
	// records.
	trimStepRecords = 8192
	// trimStepRest is the rest between steps: commits take a few
	// milliseconds each.
	trimStepRest = 20 * time.Millisecond
)

// trimLog drops the log's records before seq: at once, or stepped
// (trimPoints) with a rest after each step. It returns the number of steps
// and the longest one (the wait for the log's writer included).
func (m *Manager) trimLog(ctx context.Context, seq uint64, stepped bool) (steps int, longest time.Duration, err error) {
	points := []uint64{seq}
	if stepped {
		points = m.trimPoints(seq)
	}
	for i, at := range points {
		if i > 0 {
			if err := sleep(ctx, trimStepRest); err != nil {
				return steps, longest, fmt.Errorf("snapshot: trim the log to %d: %w", seq, err)
			}
		}
		began := time.Now()
		if err := m.log.TruncateFront(ctx, at); err != nil {
			return steps, longest, fmt.Errorf("snapshot: trim the log to %d: %w", at, err)
		}
		steps++
		longest = max(longest, time.Since(began))
	}
	return steps, longest, nil
}

// segmentedLog is a Log that lists where its segments begin; *wal.Log is
// one.
type segmentedLog interface {
	SegmentStarts() ([]uint64, error)
}

// trimPoints returns the targets of a stepped trim to seq: the ends of
// segments when the log lists them (segmentCuts), else steps of
// trimStepRecords from the first record kept, the last one at seq.
func (m *Manager) trimPoints(seq uint64) []uint64 {
	first := m.log.FirstSeq()
	if seq <= first {
		return []uint64{seq} // nothing to drop: a no-op for the log
	}
	if sl, ok := m.log.(segmentedLog); ok {
		if starts, err := sl.SegmentStarts(); err == nil {
			return segmentCuts(first, seq, starts)
		}
	}
	var points []uint64
	for at := first; at < seq; {
		at = min(at+trimStepRecords, seq)
		points = append(points, at)
	}
	return points
}

// segmentCuts returns the targets of a stepped trim to seq of a log whose
// first record is first and whose segments begin at starts: each the last
// record of a segment, since the log's truncation rewrites what it keeps
// of the segment holding the new first record (one record there; up to a
// whole segment, written and fsynced while no commit is written, anywhere
// else: wal.Log.SegmentStarts). A step spans the segments holding up to
// trimStepRecords records, or one segment holding more. The records
// before seq in the segment holding it stay until the next trim.
func segmentCuts(first, seq uint64, starts []uint64) []uint64 {
	var cuts []uint64
	from, cand := first, uint64(0)
	for _, s := range starts {
		if s < 2 {
			continue
		}
		c := s - 1
		if c <= first || c > seq {
			continue
		}
		if cand != 0 && c-from > trimStepRecords {
			cuts = append(cuts, cand)
			from = cand
		}
		cand = c
	}
	if cand != 0 {
		cuts = append(cuts, cand)
	}
	return cuts
}

// Run takes a snapshot every Every, or sooner once EveryRecords records
// were logged since the last one, until ctx is done, each paced to use at
// most CPUShare of one core and trimming the log in steps (trimLog). Failures are logged and retried at the next
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
		if _, err := m.take(ctx, newPacer(m.opts.CPUShare)); err != nil && ctx.Err() == nil {
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
