package snapshot_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"marketd/core"
	"marketd/internal/manualclock"
	"marketd/snapshot"
	"marketd/wal/record"
)

// FuzzDecodeSnapshot feeds arbitrary bytes to the snapshot decoder, seeded
// with real snapshots: it must never panic, and whatever it accepts must
// load into a state and encode back to the same records.
func FuzzDecodeSnapshot(f *testing.F) {
	dir := f.TempDir()
	c := newClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	_, n := runRecordedF(f, dir, c)
	files, _ := filepath.Glob(filepath.Join(snapDir(dir), "*.snap"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	n.stop()
	f.Fuzz(func(t *testing.T, b []byte) {
		var recs []*core.Record
		_, err := snapshot.Decode(b, func(r *core.Record) error {
			recs = append(recs, r)
			return nil
		})
		if err != nil {
			return
		}
		for _, r := range recs {
			again, err := record.Decode(record.Append(nil, r))
			if err != nil || !bytes.Equal(record.Append(nil, again), record.Append(nil, r)) {
				t.Fatalf("accepted record does not round-trip: %v", err)
			}
			_ = core.NewState().LoadImage(r) // must not panic
		}
	})
}

func runRecordedF(f *testing.F, dir string, c *manualclock.Clock) (history, *node) {
	n := start(f, dir, c)
	w := newWorkload(f, n, 12)
	for i := range 60 {
		w.step()
		if i%20 == 19 {
			if _, err := n.snaps.Take(w.ctx); err != nil {
				f.Fatal(err)
			}
		}
	}
	return nil, n
}
