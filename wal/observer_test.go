package wal

import (
	"sync"
	"testing"
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

// TestObserver checks that the observer is told of every commit: as many
// as the log counts, their records and bytes summing to the log's, their
// seqs following each other, a write time within the commit's, an fsync
// time with fsync on and none with it off.
func TestObserver(t *testing.T) {
	for _, noFsync := range []bool{false, true} {
		obs := &commitLog{}
		opts := testOptions()
		opts.NoFsync, opts.Observer = noFsync, obs
		l := mustOpen(t, t.TempDir(), opts)
		l.Start()
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
			if c.Records <= 0 || c.Took <= 0 || (c.Fsync > 0) == noFsync || c.Fsync > c.Took {
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
