package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"

	"marketd/core"
	"marketd/internal/vfs"
)

// Replayer is the log as recovery reads it; *wal.Log has it.
type Replayer interface {
	// FirstSeq is the first record held; LastSeq+1 when the log is empty.
	FirstSeq() uint64
	// LastSeq is the last record held, 0 when none ever was.
	LastSeq() uint64
	// ReplayPrepared calls fn with every record from seq from on,
	// verified, each first given, with the Prepared fn then receives, to
	// a function newPrepare made for the goroutine (of several) that
	// decoded it.
	ReplayPrepared(from uint64, newPrepare func() func(*core.Record, *core.Prepared), fn func(seq uint64, rec *core.Record, p *core.Prepared) error) error
}

// Recovered says what recovery did.
type Recovered struct {
	// Snapshot is the snapshot the state was loaded from; nil when the
	// whole log was replayed onto an empty state.
	Snapshot *Header
	// Skipped names the snapshots passed over, newest first, with why.
	Skipped []string
	// Replayed is the number of log records applied after the snapshot.
	Replayed uint64
}

// Recover rebuilds the state: the newest snapshot in dir that is intact and
// usable with the log (the log still holds what follows its From), then the
// log replayed after it, then the invariant checker. A damaged snapshot is
// renamed aside (.bad) and passed over for the previous one, which
// retention keeps with the longer log for this purpose. Damage in the log,
// a log that ends before an intact snapshot's reach (it lost durable
// records), a state that fails its invariants, or a log that starts after
// every usable snapshot stops recovery with an error: nothing is dropped
// silently.
func Recover(fsys vfs.FS, dir string, log Replayer, logger *slog.Logger) (*core.State, Recovered, error) {
	return recoverState(fsys, dir, log, logger, false)
}

// Inspect recovers the state as Recover does without changing anything in
// dir, for the offline checker: it creates no directory, removes no
// half-written snapshot and sets no damaged one aside, it only passes over
// them (a missing dir reads as one without snapshots). The log it replays
// should be a read-only one too (wal.Reader). It does not run the invariant
// checker, so that the caller can report on each invariant
// (core.State.CheckReport) of a state that breaks some.
func Inspect(fsys vfs.FS, dir string, log Replayer, logger *slog.Logger) (*core.State, Recovered, error) {
	return recoverState(fsys, dir, log, logger, true)
}

func recoverState(fsys vfs.FS, dir string, log Replayer, logger *slog.Logger, readOnly bool) (*core.State, Recovered, error) {
	if fsys == nil {
		fsys = vfs.Default()
	}
	if logger == nil {
		logger = slog.Default()
	}
	var rec Recovered
	var froms []uint64
	var err error
	if readOnly {
		froms, err = list(fsys, dir)
		if errors.Is(err, fs.ErrNotExist) {
			froms, err = nil, nil
		}
	} else {
		if err := fsys.MkdirAll(dir, 0o750); err != nil {
			return nil, rec, fmt.Errorf("snapshot: recover: %w", err)
		}
		removeTemps(fsys, dir, logger)
		froms, err = list(fsys, dir)
	}
	if err != nil {
		return nil, rec, err
	}
	first, last := log.FirstSeq(), log.LastSeq()
	for _, from := range froms {
		name := filepath.Join(dir, fileName(from))
		st, h, err := load(fsys, name)
		if err != nil {
			// Set it aside, so that retention never counts on it.
			logger.Warn("snapshot damaged, trying an older one", "file", name, "err", err)
			rec.Skipped = append(rec.Skipped, fmt.Sprintf("%s: %v", name, err))
			if readOnly {
				continue
			}
			if rerr := fsys.Rename(name, name+badSuffix); rerr != nil {
				return nil, rec, fmt.Errorf("snapshot: recover: set aside %s: %w", name, rerr)
			}
			continue
		}
		if last < max(h.From, h.Through) {
			// A snapshot is published only once the log is durable through
			// it: a log that falls short has lost acknowledged records.
			return nil, rec, fmt.Errorf("snapshot: recover: %s needs the log through %d, but it ends at %d: the log lost durable records",
				name, max(h.From, h.Through), last)
		}
		if from+1 < first {
			logger.Warn("snapshot older than the log, trying an older one", "file", name, "log_first", first)
			rec.Skipped = append(rec.Skipped, fmt.Sprintf("%s: the log starts at %d, after its From %d", name, first, from))
			continue
		}
		rec.Snapshot = &h
		return replayAndCheck(st, log, h.From+1, rec, !readOnly)
	}
	if first > 1 {
		return nil, rec, fmt.Errorf("snapshot: recover: no usable snapshot in %s and the log starts at %d (skipped: %s)",
			dir, first, strings.Join(rec.Skipped, "; "))
	}
	return replayAndCheck(core.NewState(), log, first, rec, !readOnly)
}

func replayAndCheck(st *core.State, log Replayer, from uint64, rec Recovered, check bool) (*core.State, Recovered, error) {
	newPrepare := func() func(*core.Record, *core.Prepared) { return st.NewPreparer().Prepare }
	err := log.ReplayPrepared(from, newPrepare, func(seq uint64, r *core.Record, p *core.Prepared) error {
		rec.Replayed++
		return st.ApplyPrepared(seq, r, p)
	})
	if err != nil {
		return nil, rec, fmt.Errorf("snapshot: recover: replay from %d: %w", from, err)
	}
	if !check {
		return st, rec, nil
	}
	if err := st.Check(); err != nil {
		return nil, rec, fmt.Errorf("snapshot: recover: the recovered state fails its invariants: %w", err)
	}
	return st, rec, nil
}

// load reads and decodes one snapshot file into a new state.
func load(fsys vfs.FS, name string) (*core.State, Header, error) {
	b, err := fsys.ReadFile(name)
	if err != nil {
		return nil, Header{}, fmt.Errorf("snapshot: read %s: %w", name, err)
	}
	st := core.NewState()
	ar := newArenas()
	images := st.NewImageLoader(ar.release)
	h, err := decode(b, st.ReserveAccounts, images.Load, ar)
	images.Close()
	if err != nil {
		return nil, Header{}, fmt.Errorf("snapshot: %s: %w", name, err)
	}
	return st, h, nil
}

// removeTemps deletes snapshots left half-written by a crash. It keeps the
// spare (spareName), for the next snapshot to be written over.
func removeTemps(fsys vfs.FS, dir string, logger *slog.Logger) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Name() != spareName && strings.HasPrefix(e.Name(), namePrefix) && strings.HasSuffix(e.Name(), tmpSuffix) {
			name := filepath.Join(dir, e.Name())
			if err := fsys.Remove(name); err != nil {
				logger.Warn("cannot remove a half-written snapshot", "file", name, "err", err)
			}
		}
	}
}
