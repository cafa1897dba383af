package wal

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/wal/record"
)

// TestBatchLayoutKnown fails when tidwall's Batch is no longer laid out as
// staged.go expects (after an upgrade of tidwall): the log still works, but
// every commit's frames are copied into the batch again.
func TestBatchLayoutKnown(t *testing.T) {
	if !batchLayoutKnown {
		t.Fatal("tidwall's Batch layout is not the one wal/staged.go mirrors; update twBatch")
	}
}

// stagedRecord is the record TestStagedCommits writes at seq: records whose
// frames take a one-byte length prefix in tidwall's segment (under 128
// bytes), two bytes (recordFor's) and, where large is set, three bytes
// (a 60,000-byte name: over 16 KiB, and over the slack of a 256 KiB segment).
func stagedRecord(seq uint64, large bool) *core.Record {
	switch {
	case large && seq%7 == 0:
		id := uuid.UUID{byte(seq), byte(seq >> 8), 1}
		return &core.Record{Kind: core.KindProfile, Time: int64(seq), Accounts: []core.AccountChange{{
			ID: id, Prev: seq, Info: &core.AccountInfo{Name: strings.Repeat("n", 60_000), Role: core.RoleSpeculator},
		}}}
	case seq%3 == 0:
		return &core.Record{Kind: core.KindTrade, Time: int64(seq)}
	default:
		return recordFor(seq)
	}
}

// TestStagedCommits writes commits of random sizes through the writer's
// commit step, the test goroutine being the writer (Start is not called),
// into segments of 256 KiB, and checks:
//
//   - while every commit fits the tail segment's buffer, its frames reach
//     tidwall staged in that buffer: the batch's own buffer is never
//     written (it stays without capacity; Batch.Write grows it), and the
//     batch refers to nothing after a commit;
//   - with records larger than the buffer's slack among them, which go
//     through Batch.Write, both ways alternate;
//   - the log then replays exactly the records written.
func TestStagedCommits(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	dir := t.TempDir()
	opts := testOptions()
	opts.SegmentSizeBytes = 256 << 10
	opts.NoFsync = true
	l := mustOpen(t, dir, opts)
	released := make(chan struct{})
	go l.release(released)
	tb := stagedBatch(&l.batch)
	if tb == nil {
		t.Fatal("tidwall's Batch layout is unknown")
	}

	seq := uint64(0)
	write := func(n int, large bool) {
		t.Helper()
		for range n {
			seq++
			e := &entry{seq: seq, frame: record.AppendFramed(nil, seq, stagedRecord(seq, large))}
			l.slots[seq&l.slotMask].Store(e)
		}
		for {
			n, err := l.commit()
			if err != nil {
				t.Fatalf("commit up to seq %d: %v", seq, err)
			}
			if n == 0 {
				break
			}
			if len(tb.entries) != 0 || l.batchData != nil {
				t.Fatalf("after a commit up to seq %d the batch holds %d entries", seq, len(tb.entries))
			}
			if !large && cap(tb.datas) != 0 {
				t.Fatalf("a commit up to seq %d copied its frames into the batch (its buffer has %d bytes of room)",
					seq, cap(tb.datas))
			}
		}
	}
	// Six segments of records under the slack, then six with large ones.
	for l.segBuf.tailSegment() == nil || len(segmentNames(t, dir)) < 7 {
		write(1+r.IntN(80), false)
	}
	largeFrom := seq + 1
	for len(segmentNames(t, dir)) < 13 {
		write(1+r.IntN(80), true)
	}
	if cap(tb.datas) == 0 {
		t.Fatal("no commit went through Batch.Write: the large records did not test it")
	}
	closeAndReplay(t, l, released, dir, opts, seq, func(seq uint64) *core.Record { return stagedRecord(seq, seq >= largeFrom) })
}

// closeAndReplay closes l, whose commits the test made on its own
// goroutine with released the end of l's release goroutine, then reopens
// dir and checks that it replays recordAt(1..last).
func closeAndReplay(t *testing.T, l *Log, released chan struct{}, dir string, opts Options, last uint64, recordAt func(uint64) *core.Record) {
	t.Helper()
	close(l.releases)
	<-released
	l.releases = make(chan releasedCommit, releaseQueue) // for Close's writer
	mustClose(t, l)

	l = mustOpen(t, dir, opts)
	defer mustClose(t, l)
	checkReplayOf(t, l, 1, last, recordAt)
}

// TestStagedCommitPastAFullTail opens a log whose tail segment is exactly
// SegmentSizeBytes long, as it is when a server stopped between filling a
// segment and creating the next one: tidwall appends the next batch's first
// entry to that full tail, starts a new segment inside the same WriteBatch
// and appends the rest there, reading their frames from where they were
// staged in the old tail's buffer. The commit is not cut at the first
// record (the segment's room is 0), so the whole batch is staged, and the
// log must still hold every record, through a reopen.
func TestStagedCommitPastAFullTail(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions()
	opts.NoFsync = true
	createLog(t, dir, 40, opts)
	names := segmentNames(t, dir)
	info, err := os.Stat(filepath.Join(dir, names[len(names)-1]))
	if err != nil {
		t.Fatal(err)
	}
	opts.SegmentSizeBytes = int(info.Size()) // the tail is full, not past its size

	l := mustOpen(t, dir, opts)
	if room := l.segBuf.room(); room != 0 {
		t.Fatalf("the reopened tail has %d bytes of room, want 0", room)
	}
	released := make(chan struct{})
	go l.release(released)
	tb := stagedBatch(&l.batch)
	if tb == nil {
		t.Fatal("tidwall's Batch layout is unknown")
	}
	// Small records after the 40 of recordFor, so that the commit fits
	// the buffer's slack past the segment's size.
	recordAt := func(seq uint64) *core.Record {
		if seq <= 40 {
			return recordFor(seq)
		}
		return &core.Record{Kind: core.KindTrade, Time: int64(seq)}
	}
	const last = 60
	for seq := uint64(41); seq <= last; seq++ {
		l.slots[seq&l.slotMask].Store(&entry{seq: seq, frame: record.AppendFramed(nil, seq, recordAt(seq))})
	}
	n, err := l.commit()
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	if n != last-40 {
		t.Fatalf("the commit took %d records, want all %d: it did not cross the segment's end", n, last-40)
	}
	if cap(tb.datas) != 0 {
		t.Fatal("the commit copied its frames into the batch: it did not test staging")
	}
	if got := len(segmentNames(t, dir)); got != len(names)+1 {
		t.Fatalf("%d segments after the commit, want %d", got, len(names)+1)
	}
	closeAndReplay(t, l, released, dir, opts, last, recordAt)
}
