package snapshot_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSnapshotWrittenOverTheSpare: a snapshot taken while trading goes on
// keeps the oldest one as the spare; the next is written over it, in place
// (the same file), and cut to its own size, so that a spare longer than
// the new snapshot leaves nothing of itself after it; a restart keeps the
// spare and recovers the state from the snapshot written over it.
func TestSnapshotWrittenOverTheSpare(t *testing.T) {
	dir := t.TempDir()
	n := start(t, dir, newClock(time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)))
	w := newWorkload(t, n, 11)
	spare := filepath.Join(snapDir(dir), "snapshot-spare.tmp")
	name := func(from uint64) string { return filepath.Join(snapDir(dir), fmt.Sprintf("snapshot-%020d.snap", from)) }
	var files []os.FileInfo // of the three snapshots, as written
	var froms []uint64
	for i := range 3 {
		for range 30 {
			w.step()
		}
		h, err := n.snaps.TakePaced(t.Context(), 1)
		if err != nil {
			t.Fatalf("snapshot %d: %v", i+1, err)
		}
		fi, err := os.Stat(name(h.From))
		if err != nil {
			t.Fatal(err)
		}
		files, froms = append(files, fi), append(froms, h.From)
	}
	// The oldest is the spare; the newest two stay, so that the one before
	// the newest can still replace a damaged newest one.
	if fi, err := os.Stat(spare); err != nil || !os.SameFile(fi, files[0]) {
		t.Fatalf("after three snapshots while trading: spare %v, want the first snapshot's file", err)
	}
	for _, f := range froms[1:] {
		if _, err := os.Stat(name(f)); err != nil {
			t.Errorf("snapshot %d: %v, want it kept", f, err)
		}
	}
	// A spare longer than any snapshot here, as a large state's would be
	// after the state shrank.
	if err := os.WriteFile(spare, make([]byte, 4<<20), 0o640); err != nil {
		t.Fatal(err)
	}
	kept, err := os.Stat(spare)
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		w.step()
	}
	h, err := n.snaps.TakePaced(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	written, err := os.Stat(name(h.From))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(kept, written) {
		t.Errorf("the new snapshot is a new file, want it written over the spare")
	}
	if written.Size() >= 4<<20 || written.Size() != n.snaps.Stats().LastSizeBytes {
		t.Errorf("the new snapshot is %d bytes, want its own size, %d", written.Size(), n.snaps.Stats().LastSizeBytes)
	}
	if _, err := os.Stat(spare); err != nil {
		t.Errorf("after the fourth snapshot: %v, want the second kept as the spare", err)
	}
	want := n.e.State().Canonical()
	n.stop()
	m := start(t, dir, n.clock)
	defer m.stop()
	if last, _ := m.snaps.Last(); last.From != h.From {
		t.Errorf("recovered from the snapshot of %d, want the one written over the spare, %d", last.From, h.From)
	}
	requireState(t, "recovered from the snapshot written over the spare", m.e.State().Canonical(), want)
	if _, err := os.Stat(spare); err != nil {
		t.Errorf("after the restart: %v, want the spare kept", err)
	}
}
