package snapshot

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// fakeRanges records the calls of a writeback.
type fakeRanges struct {
	started, waited [][2]int64
}

func (f *fakeRanges) start(off, n int64) error {
	f.started = append(f.started, [2]int64{off, n})
	return nil
}

func (f *fakeRanges) wait(off, n int64) error {
	f.waited = append(f.waited, [2]int64{off, n})
	return nil
}

// TestWritebackSteps writes files of random sizes in random pieces and
// checks the pacing: every whole step's writeback is started once, in
// order; the ranges awaited follow each other from 0; and after each
// write, at most two steps are not awaited yet.
func TestWritebackSteps(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	const step = 64
	for range 200 {
		fr := &fakeRanges{}
		w := &writeback{rs: fr, step: step}
		var size int64
		for range rng.IntN(50) {
			size += rng.Int64N(3 * step)
			if err := w.wrote(size); err != nil {
				t.Fatal(err)
			}
			if size-w.waited >= 3*step {
				t.Fatalf("size %d, awaited up to %d: more than two steps not awaited", size, w.waited)
			}
		}
		var off int64
		for _, r := range fr.started {
			if r != [2]int64{off, step} {
				t.Fatalf("writeback started for %v, want [%d %d]", r, off, step)
			}
			off += step
		}
		if off != size/step*step {
			t.Fatalf("writeback started up to %d of %d bytes, want every whole step", off, size)
		}
		off = 0
		for _, r := range fr.waited {
			if r[0] != off || r[1] <= 0 || r[1]%step != 0 {
				t.Fatalf("awaited %v after %d, want the next whole steps", r, off)
			}
			off += r[1]
		}
		if want := max(0, size/step*step-step); off != want {
			t.Fatalf("awaited up to %d of %d bytes, want %d", off, size, want)
		}
	}
}

// TestWritebackRealFile checks that sync_file_range accepts the calls of
// a real file on this system (the range syncer exists on Linux).
func TestWritebackRealFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := newWriteback(f)
	if w.rs == nil {
		t.Skip("no range writeback on this system")
	}
	buf := make([]byte, 300<<10)
	var size int64
	for range 12 {
		n, err := f.Write(buf)
		if err != nil {
			t.Fatal(err)
		}
		size += int64(n)
		if err := w.wrote(size); err != nil {
			t.Fatal(err)
		}
	}
	if w.started != size/writebackStepBytes*writebackStepBytes || w.waited != w.started-writebackStepBytes {
		t.Fatalf("started %d, awaited %d of %d bytes", w.started, w.waited, size)
	}
}
