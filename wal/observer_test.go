package wal

import (
	"sync"
	"testing"
	"time"
)

// commitLog is an Observer that keeps what it was told.
type commitLog struct {
	mu      sync.Mutex
	commits []Commit
}

func (c *commitLog) ObserveCommit(cm Commit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.commits = append(c.commits, cm)
}

// startObserved opens and starts a log in a new directory, with fsync on
// or off, whose commits a commitLog observes.
func startObserved(t *testing.T, noFsync bool) (*Log, *commitLog) {
	t.Helper()
	obs := &commitLog{}
	opts := testOptions()
	opts.NoFsync, opts.Observer = noFsync, obs
	l := mustOpen(t, t.TempDir(), opts)
	l.Start()
	return l, obs
}

// TestObserver checks that the observer is told of every commit: as many
// as the log counts, their records and bytes summing to the log's, their
// seqs following each other, a write time within the commit's, an fsync
// time with fsync on and none with it off.
func TestObserver(t *testing.T) {
	for _, noFsync := range []bool{false, true} {
		l, obs := startObserved(t, noFsync)
		var dones []chan error
		for range 300 {
			_, done := appendSeq(t, l)
			dones = append(dones, done)
		}
		for _, done := range dones {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		writeRecords(t, l, 5) // one at a time: commits of one record
		mustClose(t, l)
		st := l.Stats()
		obs.mu.Lock()
		var records, bytes uint64
		nextSeq := uint64(1)
		for _, c := range obs.commits {
			// The commits cover the seqs in order, without gap or overlap.
			if c.First != nextSeq || c.Last != c.First+uint64(c.Records)-1 ||
				c.Began.IsZero() || c.Write <= 0 || c.Write+c.Fsync > c.Took {
				t.Errorf("NoFsync %v: commit %+v, want it to start at seq %d", noFsync, c, nextSeq)
			}
			nextSeq = c.Last + 1
			records += uint64(c.Records)
			bytes += uint64(c.Bytes)
			// One goroutine appends in order: no record is ever missing
			// while a later one is ready.
			if c.Records <= 0 || c.Took <= 0 || (c.Fsync > 0) == noFsync || c.Fsync > c.Took || c.Held != 0 {
				t.Errorf("NoFsync %v: commit %+v", noFsync, c)
			}
		}
		if uint64(len(obs.commits)) != st.Batches || records != 305 || records != st.Records || bytes != st.Bytes {
			t.Errorf("NoFsync %v: observed %d commits, %d records, %d bytes; the log counts %d, %d, %d",
				noFsync, len(obs.commits), records, bytes, st.Batches, st.Records, st.Bytes)
		}
		obs.mu.Unlock()
	}
}

// TestCommitHeldByHole checks that a commit whose first record was missing
// while a later one was ready (an actor between Next and Append) reports
// how long the later records waited for it, in Commit.Held and in Stats,
// and that the commits after it report no wait.
func TestCommitHeldByHole(t *testing.T) {
	for _, noFsync := range []bool{false, true} {
		l, obs := startObserved(t, noFsync)
		writeRecords(t, l, 3) // in order: no hole
		hole, err := l.Next()
		if err != nil {
			t.Fatal(err)
		}
		later, laterDone := appendSeq(t, l)
		// The writer, kicked by the later record, finds the hole before it.
		deadline := time.Now().Add(10 * time.Second)
		for l.counters.holesSeen.Load() == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("NoFsync %v: the writer did not see the hole at seq %d with seq %d ready", noFsync, hole, later)
			}
			time.Sleep(time.Millisecond)
		}
		const wait = 5 * time.Millisecond
		time.Sleep(wait) // the hole stays open this long at least
		holeDone := make(chan error, 1)
		l.Append(hole, recordFor(hole), holeDone)
		for _, done := range []chan error{holeDone, laterDone} {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		writeRecords(t, l, 2)
		mustClose(t, l) // the releaser has told the observer of every commit
		st := l.Stats()
		obs.mu.Lock()
		var held []Commit
		for _, c := range obs.commits {
			if c.Held != 0 {
				held = append(held, c)
			}
		}
		obs.mu.Unlock()
		if len(held) != 1 || held[0].First != hole || held[0].Held < wait {
			t.Fatalf("NoFsync %v: commits that waited for a hole: %+v; want one, from seq %d, of at least %v", noFsync, held, hole, wait)
		}
		if st.Holds != 1 || st.HeldTotal != held[0].Held {
			t.Errorf("NoFsync %v: stats count %d holds, %v in all; want 1, %v", noFsync, st.Holds, st.HeldTotal, held[0].Held)
		}
	}
}
