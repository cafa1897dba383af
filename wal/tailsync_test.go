package wal

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTailFileIsTheTail commits batches of random sizes into small
// segments with FsyncHoldsProcessor, truncating now and then to the tail
// segment's first record (tidwall then puts a new file under the tail's
// name), and checks after every commit that the descriptor the writer
// fsynced is the tail segment's file, not one it replaced: a commit
// acknowledged on an fsync of a replaced file would not be durable.
func TestTailFileIsTheTail(t *testing.T) {
	opts := testOptions()
	opts.SegmentSizeBytes = 16 << 10
	opts.FsyncHoldsProcessor = true
	l, r, dir, released := openAsWriter(t, opts, "the writer fsyncs through tidwall, and there is no descriptor of its own to check")
	stat := func(what string, fi os.FileInfo, err error) os.FileInfo {
		t.Helper()
		if err != nil {
			t.Fatalf("stat %s: %v", what, err)
		}
		return fi
	}
	seq, own, truncations := uint64(1), 0, 0
	for seq < 3000 {
		seq = stageAndCommit(t, l, r, seq, func(seq uint64) {
			if l.tail.f == nil {
				return // the commit filled its segment: tidwall fsynced it
			}
			own++
			fi, err := l.tail.f.Stat()
			tailFile := stat("the writer's descriptor", fi, err)
			tail := l.segBuf.tailSegment()
			fi, err = os.Stat(tail.path)
			if !os.SameFile(tailFile, stat(tail.path, fi, err)) {
				t.Fatalf("before seq %d: the writer fsynced a file that is not tidwall's tail %s", seq, filepath.Base(tail.path))
			}
		})
		if r.IntN(8) == 0 {
			names := segmentNames(t, dir)
			first, err := strconv.ParseUint(names[len(names)-1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			req := truncRequest{seq: first, reply: make(chan truncReply, 1)}
			if err := l.serveTruncate(req); err != nil {
				t.Fatal(err)
			}
			if rep := <-req.reply; rep.err != nil {
				t.Fatalf("truncate to %d: %v", first, rep.err)
			}
			truncations++
		}
	}
	close(l.releases)
	<-released
	t.Logf("%d commits fsynced through the writer's descriptor, %d truncations", own, truncations)
	if own == 0 || truncations == 0 {
		t.Fatalf("%d commits fsynced through the writer's descriptor, %d truncations: the test checked nothing", own, truncations)
	}
	l.releases = make(chan releasedCommit, releaseQueue) // for Close's writer
	mustClose(t, l)
	if l.tail.f != nil {
		t.Error("Close left the tail's descriptor open")
	}
	l = mustOpen(t, dir, opts)
	defer mustClose(t, l)
	checkReplay(t, l, l.FirstSeq(), seq-1)
}

// TestHoldingCalls checks the raw system calls of hold.go: an fsync of an
// open file succeeds, one of a closed file fails as os.File.Sync does, and
// a sleep lasts at least as asked.
func TestHoldingCalls(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("durable"); err != nil {
		t.Fatal(err)
	}
	if err := FsyncHolding(f); err != nil {
		t.Errorf("fsync of an open file: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := FsyncHolding(f); err == nil || !strings.Contains(err.Error(), f.Name()) {
		t.Errorf("fsync of a closed file: %v, want an error naming it", err)
	}
	for _, d := range []time.Duration{0, 100 * time.Microsecond, 2 * time.Millisecond} {
		start := time.Now()
		NanosleepHolding(d)
		if took := time.Since(start); took < d {
			t.Errorf("NanosleepHolding(%v) returned after %v", d, took)
		}
	}
}

// TestFsyncThroughRuntime checks that the writer holds its processor only
// with FsyncHoldsProcessor and while no FsyncThroughRuntime call is in
// force, that calls nest, and that a restore undoes only its own call,
// once.
func TestFsyncThroughRuntime(t *testing.T) {
	opts := testOptions()
	opts.FsyncHoldsProcessor = true
	l := mustOpen(t, t.TempDir(), opts)
	defer mustClose(t, l)
	if !l.holdsProcessor() {
		t.Fatal("with the option and no call in force: not held")
	}
	r1 := l.FsyncThroughRuntime()
	r2 := l.FsyncThroughRuntime()
	r1()
	r1() // a second call of one restore does nothing
	if l.holdsProcessor() {
		t.Error("held with one call still in force")
	}
	r2()
	if !l.holdsProcessor() {
		t.Error("not held once every call is restored")
	}
	plain := mustOpen(t, t.TempDir(), testOptions())
	defer mustClose(t, plain)
	if plain.holdsProcessor() {
		t.Error("held without the option")
	}
}
