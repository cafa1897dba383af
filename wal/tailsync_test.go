package wal

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// TestCommitsHoldTheProcessorOnlyWithASpare checks that a commit's fsync
// keeps the writer's processor exactly when the runtime has one more than
// the CPUs (tailsync.go), on Linux alone, across segment changes, and that
// the records replay either way.
func TestCommitsHoldTheProcessorOnlyWithASpare(t *testing.T) {
	if tailFileOffset == ^uintptr(0) {
		t.Fatal("tidwall's Log has no sfile *os.File field: every fsync would go through tidwall's Sync")
	}
	for _, tc := range []struct {
		name  string
		procs int
		held  bool
	}{
		{"one processor per CPU", runtime.NumCPU(), false},
		{"a spare processor", runtime.NumCPU() + 1, rawFsync},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(tc.procs))
			dir := t.TempDir()
			opts := testOptions()
			opts.SegmentSizeBytes = 4096 // several segments, so the tail file changes
			l := mustOpen(t, dir, opts)
			l.Start()
			writeRecords(t, l, 200)
			st := l.Stats()
			if segs := len(segmentNames(t, dir)); segs < 3 {
				t.Fatalf("%d segments, want several", segs)
			}
			if st.Fsyncs == 0 {
				t.Fatalf("no fsyncs: %+v", st)
			}
			want := uint64(0)
			if tc.held {
				want = st.Fsyncs
			}
			if st.HeldFsyncs != want {
				t.Errorf("%d of %d fsyncs held the processor at GOMAXPROCS %d with %d CPUs, want %d",
					st.HeldFsyncs, st.Fsyncs, tc.procs, runtime.NumCPU(), want)
			}
			mustClose(t, l)
			l = mustOpen(t, dir, opts)
			checkReplay(t, l, 1, 200)
			mustClose(t, l)
		})
	}
}

// TestTailFileIsTheLastSegment checks that the field read through unsafe is
// tidwall's open file of the last segment, before and after a segment change.
func TestTailFileIsTheLastSegment(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions()
	opts.SegmentSizeBytes = 4096
	l := mustOpen(t, dir, opts)
	l.Start()
	for _, n := range []int{1, 100} {
		writeRecords(t, l, n)
		// The writer is idle between commits; the test reads the field
		// the writer owns only after the commit it waited for.
		f := tailFile(l.tw)
		names := segmentNames(t, dir)
		if f == nil || filepath.Base(f.Name()) != names[len(names)-1] {
			t.Fatalf("tail file %v, want the last of %v", f, names)
		}
	}
	mustClose(t, l)
}

// TestFsyncHoldingErrors checks that a failed raw fsync is an error naming
// the file, matched by errors.Is.
func TestFsyncHoldingErrors(t *testing.T) {
	if !rawFsync {
		t.Skip("no raw fsync outside Linux (tailsync_other.go)")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, tc := range []struct {
		name string
		file func() *os.File
		want error // nil: any error
	}{
		{"a pipe cannot be fsynced", func() *os.File { return r }, syscall.EINVAL},
		{"a closed file", func() *os.File {
			f, err := os.Create(filepath.Join(t.TempDir(), "closed"))
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			return f
		}, nil}, // internal/poll's ErrFileClosing, which os does not export
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.file()
			err := fsyncHolding(f)
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("fsyncHolding: %v, want %v", err, tc.want)
			}
			if !errorsMention(err, f.Name()) {
				t.Errorf("error %q does not name %s", err, f.Name())
			}
		})
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "file"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := fsyncHolding(f); err != nil {
		t.Fatalf("fsync of a regular file: %v", err)
	}
	r.Close()
}

func errorsMention(err error, s string) bool { return err != nil && containsAll(err.Error(), s) }
