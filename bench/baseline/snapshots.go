package baseline

import (
	"context"
	"fmt"
	"time"

	"marketd/internal/vfs"
	"marketd/snapshot"
)

// WriteSnapshots writes a file of size bytes into dir every period, the
// way marketd writes a periodic snapshot (snapshot.WriteSized), each
// spread over spread (0: as fast as it is written), until ctx
// is done, and returns how many it finished; wrote, when not nil, is told
// when each began and ended. The first comes half a period after the
// start, so that a run of whole periods holds as many as a server
// snapshotting every period holds in a window of that length. Beside a handler under load,
// it is the disk's share of marketd's snapshots of that size without
// their state: the floor of a load run in which marketd snapshots
// (docs/PERFORMANCE.md, "A floor for the 1,000,000-account row"). dir
// must be no server's. An error of a write ends it: a floor that did not
// write what marketd wrote would be no floor.
func WriteSnapshots(ctx context.Context, dir string, size int64, period, spread time.Duration, nice int, wrote func(start, end time.Time)) (int, error) {
	if period <= 0 {
		return 0, fmt.Errorf("baseline: snapshots every %v", period)
	}
	fsys := vfs.Default()
	if err := fsys.MkdirAll(dir, 0o750); err != nil {
		return 0, fmt.Errorf("baseline: snapshots' directory: %w", err)
	}
	next := time.Now().Add(period / 2)
	t := time.NewTimer(period / 2)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return n, nil
		case <-t.C:
		}
		start := time.Now()
		if err := snapshot.WriteSized(ctx, fsys, dir, uint64(n)+1, size, nice, spread); err != nil {
			if ctx.Err() != nil {
				return n, nil
			}
			return n, fmt.Errorf("baseline: snapshot %d: %w", n+1, err)
		}
		if wrote != nil {
			wrote(start, time.Now())
		}
		// Every period from the first, as marketd's; a write that took
		// longer than a period is followed by the next at once.
		next = next.Add(period)
		t.Reset(max(time.Until(next), 0))
	}
}
