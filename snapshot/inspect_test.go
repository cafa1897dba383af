package snapshot_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"marketd/internal/vfs"
	"marketd/snapshot"
	"marketd/wal"
)

// TestInspectWritesNothing damages the newest snapshot and leaves a
// half-written one behind: Inspect, on a file system that fails every
// operation that could write, must fall back as Recover does, to the same
// state, without setting anything aside or removing anything.
func TestInspectWritesNothing(t *testing.T) {
	dir := t.TempDir()
	hist, last, newest := damageNewestSnapshot(t, dir)
	name := filepath.Join(snapDir(dir), fmt.Sprintf("snapshot-%020d.snap", newest.From))
	if err := os.WriteFile(name+".tmp", []byte("half"), 0o640); err != nil {
		t.Fatal(err)
	}
	before := listFiles(t, snapDir(dir))
	readOnly := vfs.NewErrorFS(vfs.Default(), vfs.FailFrom(vfs.Mutating, 1))
	log, err := wal.OpenReader(readOnly, walDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	st, rec, err := snapshot.Inspect(readOnly, snapDir(dir), log, quiet)
	if err != nil {
		t.Fatal(err)
	}
	requireFallback(t, "inspect", rec, newest)
	requireState(t, "inspect", st.Canonical(), hist[last])
	if after := listFiles(t, snapDir(dir)); !reflect.DeepEqual(after, before) {
		t.Fatalf("files changed: %v, were %v", after, before)
	}
	for _, op := range readOnly.Ops() {
		if op.Kind.Mutates() {
			t.Fatalf("inspect tried %v", op)
		}
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
