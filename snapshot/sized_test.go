package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"marketd/internal/vfs"
)

// TestWriteSized writes files of several sizes one after the other and
// checks each one's size, and that the directory holds the newest two
// and a spare as a paced retention leaves it (Manager.retain), the spare
// written over by the next.
func TestWriteSized(t *testing.T) {
	dir := t.TempDir()
	fsys := vfs.Default()
	sizes := []int64{0, 1, sizedBlockBytes + 5, 3 * writebackStepBytes, 2 * sizedBlockBytes, 7}
	for i, size := range sizes {
		seq := uint64(i + 1)
		if err := WriteSized(context.Background(), fsys, dir, seq, size, 0, 0); err != nil {
			t.Fatalf("write %d (%d bytes): %v", seq, size, err)
		}
		st, err := os.Stat(filepath.Join(dir, fileName(seq)))
		if err != nil || st.Size() != size {
			t.Fatalf("write %d: %v, size %v; want %d bytes", seq, err, st, size)
		}
		var want []string
		for s := max(1, seq-1); s <= seq; s++ {
			want = append(want, fileName(s))
		}
		if seq >= 3 {
			want = append(want, spareName)
		}
		slices.Sort(want)
		if got := dirNames(t, dir); !slices.Equal(got, want) {
			t.Errorf("after write %d: %q; want %q", seq, got, want)
		}
	}
}

// TestWriteSizedCancelled checks that a cancelled write fails and leaves
// no file behind.
func TestWriteSizedCancelled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stopped")
	cancel(stop)
	if err := WriteSized(ctx, vfs.Default(), dir, 1, 4*sizedBlockBytes, 0, 0); !errors.Is(err, stop) {
		t.Errorf("WriteSized after cancel: %v; want %v", err, stop)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("after a cancelled write: %q; want nothing", got)
	}
	if err := WriteSized(context.Background(), vfs.Default(), dir, 1, -1, 0, 0); err == nil {
		t.Error("WriteSized of -1 bytes: no error")
	}
}

// TestWriteSizedSpread checks that a write spread over a duration takes
// about that long: its last block is due at its share of it.
func TestWriteSizedSpread(t *testing.T) {
	const spread = 200 * time.Millisecond
	start := time.Now()
	if err := WriteSized(context.Background(), vfs.Default(), t.TempDir(), 1, 4*sizedBlockBytes, 0, spread); err != nil {
		t.Fatal(err)
	}
	if took, least := time.Since(start), spread*3/4; took < least {
		t.Errorf("4 blocks spread over %v took %v; want at least %v (the last block's due time)", spread, took, least)
	}
}

// dirNames returns the sorted names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		paths[i] = filepath.Base(p)
	}
	return paths
}
