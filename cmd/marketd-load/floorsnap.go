package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"marketd/bench/baseline"
	"marketd/bench/load"
	"marketd/snapshot"
)

// floorSnapshots writes, during each measured run of a handler marketd is
// compared with, a file of -floor-snapshot-bytes every -snapshot-every,
// spread over -floor-snapshot-spread, the way marketd writes a periodic
// snapshot (baseline.WriteSnapshots), so
// that a run in which marketd snapshots has its floors measured beside the
// same writes (docs/PERFORMANCE.md, "A floor for the 1,000,000-account
// row"). The writes run in marketd-load's process, on a thread of their
// own at marketd's default nice value, as marketd runs its snapshot's
// accounts pass; the handlers run in theirs (-baselines).
type floorSnapshots struct {
	dir    string
	size   int64
	period time.Duration
	spread time.Duration

	mu      sync.Mutex
	windows map[string][]load.Window // by target
	errs    []error
}

// newFloorSnapshots returns the writer of cfg's floor snapshots, in a new
// directory beside dataDir (on the same disk as the handlers' files), or
// nil when cfg asks for none.
func newFloorSnapshots(cfg config, dataDir string) (*floorSnapshots, error) {
	if cfg.floorSnapshotBytes == 0 || !cfg.compare {
		return nil, nil
	}
	dir, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dataDir)), "marketd-load-floor-snapshots-")
	if err != nil {
		return nil, fmt.Errorf("floor snapshots: %w", err)
	}
	return &floorSnapshots{dir: dir, size: cfg.floorSnapshotBytes, period: cfg.snapshotEvery, spread: cfg.floorSnapshotSpread,
		windows: make(map[string][]load.Window)}, nil
}

// measured starts the writes as a measured run of target begins, unless
// target is marketd, which takes its own; the function it returns stops
// them and waits until they have.
func (fs *floorSnapshots) measured(target string) func() {
	if target == marketdName {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := baseline.WriteSnapshots(ctx, fs.dir, fs.size, fs.period, fs.spread, snapshot.DefaultThreadNice,
			func(start, end time.Time) {
				fs.mu.Lock()
				fs.windows[target] = append(fs.windows[target], load.Window{Start: start, End: end})
				fs.mu.Unlock()
			})
		if err != nil {
			fs.mu.Lock()
			fs.errs = append(fs.errs, fmt.Errorf("floor snapshots beside %s: %w", target, err))
			fs.mu.Unlock()
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// mark marks in cmp the seconds of each floor's runs during which a file
// was written, and returns the writes' errors: a floor that did not write
// what it was asked to is no floor.
func (fs *floorSnapshots) mark(cmp *load.Comparison) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if cmp != nil {
		for target, ws := range fs.windows {
			cmp.MarkSnapshots(target, ws)
		}
	}
	return errors.Join(fs.errs...)
}

// close removes the files written.
func (fs *floorSnapshots) close() error {
	if err := os.RemoveAll(fs.dir); err != nil {
		return fmt.Errorf("floor snapshots: %w", err)
	}
	return nil
}
