// Package populate fills a new marketd data directory with many accounts,
// offline and fast, through the same code a running server uses: core's
// engine creates the accounts, the write-ahead log (package wal) records
// them, and a snapshot (package snapshot) is taken at the end, so that a
// server started on the directory loads them from the snapshot as it would
// after a restart. The load generator uses it for the rows of
// docs/PERFORMANCE.md that need a server holding 1,000,000 accounts.
//
// The log is written with fsync off, and every file of the directory is
// fsynced once at the end instead: the directory is durable when Accounts
// returns, and no dirty page of it is left for the kernel to write back
// during the measurement that follows.
package populate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/vfs"
	"marketd/snapshot"
	"marketd/wal"
)

const (
	// MaxAccounts bounds Options.Accounts: ten times the largest state
	// the performance targets name.
	MaxAccounts = 10_000_000
	// parallel is the number of goroutines creating accounts: enough for
	// the log's group commit to gather large batches.
	parallel = 64
	// namePrefix starts every account's name; marketd-load's bots start
	// with "ld-", so the two never collide.
	namePrefix = "pop"
	// bonusKP is each account's signup bonus: one ledger entry each, as a
	// registered account has.
	bonusKP = 1000
)

// ErrNotEmpty reports a data directory that already holds something:
// populate only fills new directories.
var ErrNotEmpty = errors.New("populate: data directory is not empty")

// Options says what to create.
type Options struct {
	// Dir is the data directory (marketd's -data): it must not exist or be
	// empty.
	Dir string
	// Accounts is how many accounts to create, 1 to MaxAccounts.
	Accounts int
	// Logger receives the log's and the snapshot's messages; nil: none.
	Logger *slog.Logger
}

// Result says what Accounts wrote.
type Result struct {
	Accounts      int
	Snapshot      snapshot.Header
	SnapshotBytes int64
	// Created is the time the accounts took, Snapshot the time the
	// snapshot took, Synced the time the final fsync of every file took.
	Created, SnapshotTook, Synced time.Duration
}

// Accounts creates o.Accounts accounts named pop0000000, pop0000001, ...
// each with a 1,000 KP bonus, in o.Dir, takes a snapshot of them, trims
// the log before it, and fsyncs every file. A server started on o.Dir then
// recovers them from the snapshot.
func Accounts(ctx context.Context, o Options) (Result, error) {
	if o.Accounts < 1 || o.Accounts > MaxAccounts {
		return Result{}, fmt.Errorf("populate: %d accounts is out of range 1-%d", o.Accounts, MaxAccounts)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if ents, err := os.ReadDir(o.Dir); err == nil && len(ents) > 0 {
		return Result{}, fmt.Errorf("%w: %s", ErrNotEmpty, o.Dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Result{}, fmt.Errorf("populate: %w", err)
	}
	walDir, snapDir := filepath.Join(o.Dir, "wal"), filepath.Join(o.Dir, "snapshots")
	log, err := wal.Open(walDir, wal.Options{NoFsync: true, Logger: o.Logger})
	if err != nil {
		return Result{}, fmt.Errorf("populate: %w", err)
	}
	st, rec, err := snapshot.Recover(nil, snapDir, log, o.Logger)
	if err != nil {
		return Result{}, errors.Join(fmt.Errorf("populate: %w", err), log.Close())
	}
	log.Start()
	e := core.NewEngine(st, log, core.Config{CloseInterval: -1})
	res, err := fill(ctx, e, st, log, snapDir, rec.Snapshot, o)
	e.Close()
	if cerr := log.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("populate: %w", cerr))
	}
	if err != nil {
		return Result{}, err
	}
	began := time.Now()
	if err := syncTree(o.Dir); err != nil {
		return Result{}, err
	}
	res.Synced = time.Since(began)
	return res, nil
}

// fill creates the accounts on e, snapshots them and trims the log.
func fill(ctx context.Context, e *core.Engine, st *core.State, log *wal.Log, snapDir string, last *snapshot.Header, o Options) (Result, error) {
	res := Result{Accounts: o.Accounts}
	began := time.Now()
	var next atomic.Int64
	errs := make([]error, parallel)
	var wg sync.WaitGroup
	for g := range parallel {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= o.Accounts || ctx.Err() != nil {
					return
				}
				name := AccountName(i)
				if _, err := e.CreateAccount(ctx, core.NewAccount{Name: name, Bonus: money.Units(bonusKP)}); err != nil {
					errs[g] = fmt.Errorf("populate: create account %s: %w", name, err)
					next.Store(int64(o.Accounts)) // the others stop too
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return res, err
	}
	res.Created = time.Since(began)
	began = time.Now()
	m := snapshot.NewManager(st, log, snapshot.Options{Dir: snapDir, Logger: o.Logger}, last)
	h, err := m.Take(ctx)
	if err != nil {
		return res, fmt.Errorf("populate: %w", err)
	}
	res.Snapshot, res.SnapshotTook, res.SnapshotBytes = h, time.Since(began), m.Stats().LastSizeBytes
	// The snapshot holds every account: the log before its last record is
	// of no use to a recovery, which replays from From+1. One record is
	// kept, as a log cannot be truncated to nothing.
	if err := log.TruncateFront(ctx, h.From); err != nil {
		return res, fmt.Errorf("populate: %w", err)
	}
	return res, nil
}

// AccountName returns the name of the account Accounts creates i-th.
func AccountName(i int) string { return fmt.Sprintf("%s%07d", namePrefix, i) }

// syncTree fsyncs every file and directory under dir, and dir's parent.
func syncTree(dir string) error {
	fsys := vfs.Default()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return vfs.SyncDir(fsys, path)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		return errors.Join(f.Sync(), f.Close())
	})
	if err == nil {
		err = vfs.SyncDir(fsys, filepath.Dir(filepath.Clean(dir)))
	}
	if err != nil {
		return fmt.Errorf("populate: fsync %s: %w", dir, err)
	}
	return nil
}
