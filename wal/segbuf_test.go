package wal

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"marketd/wal/record"
)

// TestTidwallLayoutKnown fails when tidwall's segment records are no
// longer laid out as segbuf.go expects (after an upgrade of tidwall): the
// log still works, but tidwall grows its segment slices again.
func TestTidwallLayoutKnown(t *testing.T) {
	l := mustOpen(t, t.TempDir(), testOptions())
	defer mustClose(t, l)
	if l.segBuf.segs == nil {
		t.Fatal("tidwall's segment layout is not the one wal/segbuf.go mirrors; update twSegment")
	}
}

// TestSegmentBuffersAllocateOnce writes twenty segments' worth of commits
// through the writer's commit step and checks that tidwall's segment
// buffers were allocated a few times, not grown by append for every
// segment (about five times each segment's size before), and that every
// record reads back.
func TestSegmentBuffersAllocateOnce(t *testing.T) {
	const (
		segBytes      = 64 << 10
		commitRecords = 37 // commits end anywhere in a segment
	)
	dir := t.TempDir()
	opts := testOptions()
	opts.SegmentSizeBytes = segBytes
	opts.NoFsync = true
	l := mustOpen(t, dir, opts)
	// The test goroutine is the writer: Start is not called, so the log's
	// files and buffers are this goroutine's; a releaser takes the commits.
	released := make(chan struct{})
	go l.release(released)
	frame := record.AppendFramed(nil, 1, recordFor(1))
	records := 20 * segBytes / len(frame)
	entries := make([]*entry, 0, records)
	for seq := uint64(1); seq <= uint64(records); seq++ {
		entries = append(entries, &entry{seq: seq, frame: record.AppendFramed(nil, seq, recordFor(seq))})
	}
	// ReadMemStats, not runtime/metrics' /gc/heap/allocs:bytes: the
	// runtime counts a small object's bytes only when the span it came
	// from leaves a processor's cache (a refill, or every cache flushed as
	// a GC begins), so a GC beginning during one measured commit counted
	// there bytes allocated before it: one commit of 284,928-312,416 bytes
	// where the others made 0-8,000, and the test failed under load.
	// ReadMemStats flushes the caches first, so each reading holds every
	// allocation before it and none after.
	var ms runtime.MemStats
	allocated := func() uint64 {
		runtime.ReadMemStats(&ms)
		return ms.TotalAlloc
	}
	var during uint64
	for i := 0; i < len(entries); i += commitRecords {
		for _, e := range entries[i:min(i+commitRecords, len(entries))] {
			l.slots[e.seq&l.slotMask].Store(e)
		}
		a0 := allocated()
		for {
			n, err := l.commit()
			if err != nil {
				t.Fatalf("commit after seq %d: %v", i, err)
			}
			if n == 0 {
				break
			}
		}
		if i >= 4*commitRecords { // after the batch's own buffers have grown
			during += allocated() - a0
		}
	}
	close(l.releases)
	<-released
	segs := len(segmentNames(t, dir))
	if segs < 15 {
		t.Fatalf("%d segments, want about 20", segs)
	}
	// A buffer is segBytes plus its slack and positions; three are made
	// (the tail, the one tidwall caches, the next), then reused. File
	// opens and the commits' wake-ups allocate a little.
	t.Logf("%d segments, %d bytes allocated by the commits", segs, during)
	if limit := uint64(4 * segBytes); during > limit {
		t.Errorf("writing %d segments allocated %d bytes, limit %d: segment buffers are not reused", segs, during, limit)
	}
	l.releases = make(chan releasedCommit, releaseQueue) // for Close's writer
	mustClose(t, l)
	l = mustOpen(t, dir, opts)
	defer mustClose(t, l)
	checkReplay(t, l, 1, uint64(records))
}

// TestSegmentFillIsTheCommitsFsync checks that a commit ending with the
// record that fills a segment makes no fsync of its own (tidwall's fsync of
// the full segment covers it), and that every other commit makes one: with
// one record per commit, every segment after the first spares one.
// TestDirectoryFsyncCoversEverySegment checks the directory's fsyncs.
func TestSegmentFillIsTheCommitsFsync(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions()
	opts.SegmentSizeBytes = 4096
	l := mustOpen(t, dir, opts)
	l.Start()
	writeRecords(t, l, 200)
	st := l.Stats()
	mustClose(t, l)
	files := len(segmentNames(t, dir))
	if files < 5 {
		t.Fatalf("%d segments, want several", files)
	}
	if want := st.Batches - uint64(files-1); st.Fsyncs != want {
		t.Errorf("%d commits over %d segments made %d fsyncs, want %d", st.Batches, files, st.Fsyncs, want)
	}
	l = mustOpen(t, dir, opts)
	defer mustClose(t, l)
	checkReplay(t, l, 1, 200)
}

// TestSegmentBuffersRandomCommits writes commits of random sizes into
// small segments (records larger than a segment among them), with
// truncations and reopenings in between, and checks after each reopening
// and at the end that the log replays exactly the records written: the
// segment buffers and the commits cut at a segment's fill change where
// tidwall's bytes live, never what it writes.
func TestSegmentBuffersRandomCommits(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	for round := range 3 {
		dir := t.TempDir()
		opts := testOptions()
		opts.SegmentSizeBytes = []int{4 << 10, 16 << 10, 64 << 10}[r.IntN(3)]
		// Fsync off keeps the test short; tidwall's fsync of a full
		// segment stays, and the directory's fsyncs are
		// TestDirectoryFsyncCoversEverySegment's.
		opts.NoFsync = true
		l := mustOpen(t, dir, opts)
		l.Start()
		first := uint64(1)
		for step := range 15 {
			var dones []chan error
			for range 1 + r.IntN(30) {
				_, done := appendSeq(t, l)
				dones = append(dones, done)
			}
			for _, done := range dones {
				if err := <-done; err != nil {
					t.Fatalf("round %d step %d: %v", round, step, err)
				}
			}
			switch r.IntN(6) {
			case 0, 2:
				// Anywhere, or near the end: inside the tail segment,
				// whose buffer tidwall then reads back.
				at := first + r.Uint64N(l.LastSeq()-first+2)
				if r.IntN(2) == 0 {
					at = max(first, l.LastSeq()-min(l.LastSeq(), r.Uint64N(3)))
				}
				if err := l.TruncateFront(t.Context(), at); err != nil {
					t.Fatalf("round %d step %d: truncate front to %d: %v", round, step, at, err)
				}
				first = max(first, at)
			case 1:
				last := l.LastSeq()
				mustClose(t, l)
				l = mustOpen(t, dir, opts)
				checkReplay(t, l, first, last)
				l.Start()
				// Into the segment tidwall read at Open, whose entries
				// were copied into a buffer then.
				at := max(first, last-min(last, r.Uint64N(8)))
				if err := l.TruncateFront(t.Context(), at); err != nil {
					t.Fatalf("round %d step %d: truncate front to %d after reopening: %v", round, step, at, err)
				}
				first = at
			}
		}
		last := l.LastSeq()
		mustClose(t, l)
		l = mustOpen(t, dir, opts)
		checkReplay(t, l, first, last)
		mustClose(t, l)
	}
}
