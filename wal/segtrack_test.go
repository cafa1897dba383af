package wal

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"marketd/internal/vfs"
)

// dirSyncFS is the os-backed FS that notes, at every fsync of a directory,
// which files the directory held: their entries are durable from then on.
// A file is known by its name and inode, so that a new file renamed over
// a durable name (a truncation rewrites a segment so) is not taken for it.
type dirSyncFS struct {
	vfs.FS
	mu      sync.Mutex
	durable map[string]uint64 // file name in the log directory -> its inode at the fsync
	syncs   int
}

// inode returns fi's inode number, 0 where the system gives none
// (TestDirectoryFsyncCoversEverySegment skips there).
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

func (f *dirSyncFS) OpenDir(dir string) (vfs.File, error) {
	d, err := f.FS.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	return &dirSyncFile{File: d, fs: f, dir: dir}, nil
}

type dirSyncFile struct {
	vfs.File
	fs  *dirSyncFS
	dir string
}

func (d *dirSyncFile) Sync() error {
	// Listed before the fsync: a file created meanwhile may not be covered.
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		return err
	}
	if err := d.File.Sync(); err != nil {
		return err
	}
	d.fs.mu.Lock()
	defer d.fs.mu.Unlock()
	d.fs.syncs++
	for _, e := range ents {
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing: nothing to make durable
		}
		if err != nil {
			return err
		}
		d.fs.durable[e.Name()] = inode(fi)
	}
	return nil
}

// segmentCheck is an Observer that, after every commit (its records
// acknowledged), checks that every segment file holding a record of that
// commit or an earlier one has a durable directory entry. The writer may
// be in the next commit meanwhile (the observer runs on the releaser), so
// a segment that begins after the commit's last record is left out.
type segmentCheck struct {
	t   *testing.T
	dir string
	fs  *dirSyncFS
	// observed is the last seq of the last commit checked. The releaser
	// answers a commit's callers before it runs the observer, so a test
	// that truncates waits for it first (waitObserved): tidwall gives the
	// truncation's new first segment its name before the writer fsyncs
	// the directory, and a check running in between would find that name,
	// holding records of earlier commits, not yet in a fsynced directory
	// (those records are still durable in the old segment until then).
	observed atomic.Uint64
}

// waitObserved waits until the commit ending at seq has been checked.
func (c *segmentCheck) waitObserved(seq uint64) {
	for deadline := time.Now().Add(10 * time.Second); c.observed.Load() < seq; {
		if time.Now().After(deadline) {
			c.t.Fatalf("the commit of seq %d was not observed in 10 s (last %d)", seq, c.observed.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

func (c *segmentCheck) ObserveCommit(cm Commit) {
	defer c.observed.Store(cm.Last)
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		c.t.Error(err)
		return
	}
	c.fs.mu.Lock()
	defer c.fs.mu.Unlock()
	for _, e := range ents {
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed by a truncation since the listing
		}
		if err != nil {
			c.t.Error(err)
			return
		}
		// Segments only, named for their first record; one of a later
		// commit is left out, and so are tidwall's .START and .END files,
		// which live only inside a truncation (the writer may be in one
		// while the releaser runs this).
		first, err := strconv.ParseUint(e.Name(), 10, 64)
		if err != nil || len(e.Name()) != segmentNameLen || first > cm.Last {
			continue
		}
		if ino, ok := c.fs.durable[e.Name()]; fi.Size() > 0 && (!ok || ino != inode(fi)) {
			c.t.Errorf("after the commit of seq %d..%d: segment %s holds %d bytes and its directory entry was never fsynced",
				cm.First, cm.Last, e.Name(), fi.Size())
		}
	}
}

// TestDirectoryFsyncCoversEverySegment writes records one at a time and in
// batches into small segments, with a truncation in the middle, and checks
// after every commit that each segment file holding records had its
// directory entry fsynced before the records were acknowledged; and that
// the directory is fsynced about once per segment, not once per commit.
func TestDirectoryFsyncCoversEverySegment(t *testing.T) {
	dir := t.TempDir()
	if fi, err := os.Stat(dir); err != nil || inode(fi) == 0 {
		t.Skipf("wal: no inode numbers from stat here (%v); the directory's fsyncs are not checked", err)
	}
	fsys := &dirSyncFS{FS: vfs.Default(), durable: map[string]uint64{}}
	opts := testOptions()
	opts.FS = fsys
	opts.SegmentSizeBytes = 64 << 10 // about 17 of these records
	check := &segmentCheck{t: t, dir: dir, fs: fsys}
	opts.Observer = check
	l := mustOpen(t, dir, opts)
	l.Start()
	writeRecords(t, l, 60) // one record per commit
	var dones []chan error
	for range 200 {
		_, done := appendSeq(t, l)
		dones = append(dones, done)
	}
	for _, done := range dones {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	check.waitObserved(l.LastSeq())
	if err := l.TruncateFront(context.Background(), l.LastSeq()-3); err != nil {
		t.Fatal(err)
	}
	writeRecords(t, l, 60)
	// At the tail's first record: tidwall rewrites the tail's file under
	// the same name, which only its inode tells from the durable one.
	check.waitObserved(l.LastSeq())
	names := segmentNames(t, dir)
	tailFirst, err := strconv.ParseUint(names[len(names)-1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateFront(context.Background(), tailFirst); err != nil {
		t.Fatal(err)
	}
	writeRecords(t, l, 5)
	st := l.Stats()
	mustClose(t, l)
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	segments := 0 // segment files ever in the directory at an fsync of it
	for name := range fsys.durable {
		if len(name) == segmentNameLen {
			segments++
		}
	}
	// One directory fsync per segment the writer began, plus Open's, the
	// first commit's (which cannot know the segment yet) and the
	// truncations'.
	t.Logf("%d commits, %d directory fsyncs, %d segments", st.Batches, st.DirFsyncs, segments)
	if st.DirFsyncs > uint64(segments)+4 || segments < 10 {
		t.Errorf("%d directory fsyncs for %d commits and %d segments: want one per segment", st.DirFsyncs, st.Batches, segments)
	}
}

// TestSegmentTrackerMatchesFile commits batches of random sizes into small
// segments, with fsync on, and checks after every commit what the tracker
// relies on instead of a stat (segtrack.go): tidwall's record of its tail
// segment holds as many bytes as the file, and the tracker's segment and
// size are the file's, so that a batch that reached a new file is told.
func TestSegmentTrackerMatchesFile(t *testing.T) {
	opts := testOptions()
	opts.SegmentSizeBytes = 16 << 10
	l, r, dir, released := openAsWriter(t, opts, "the tracker stats the file, and there is nothing to compare")
	size := func(path string) int64 {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	seq := uint64(1)
	for seq < 2000 {
		seq = stageAndCommit(t, l, r, seq, func(seq uint64) {
			tail := l.segBuf.tailSegment()
			if got, want := int64(len(tail.ebuf)), size(tail.path); got != want {
				t.Fatalf("before seq %d: tidwall's tail %s holds %d bytes, the file %d", seq, filepath.Base(tail.path), got, want)
			}
			if l.seg.path != "" {
				if got, want := l.seg.size, size(l.seg.path); got != want {
					t.Fatalf("before seq %d: the tracker has %s at %d bytes, the file %d", seq, filepath.Base(l.seg.path), got, want)
				}
			}
		})
	}
	close(l.releases)
	<-released
	st := l.Stats()
	segs := len(segmentNames(t, dir))
	t.Logf("%d commits, %d segments, %d directory fsyncs", st.Batches, segs, st.DirFsyncs)
	if st.DirFsyncs > uint64(segs)+2 {
		t.Errorf("%d directory fsyncs for %d segments: want one per segment", st.DirFsyncs, segs)
	}
	l.releases = make(chan releasedCommit, releaseQueue) // for Close's writer
	mustClose(t, l)
	l = mustOpen(t, dir, opts)
	defer mustClose(t, l)
	checkReplay(t, l, 1, seq-1)
}
