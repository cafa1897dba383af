package wal

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"marketd/core"
	"marketd/internal/vfs"
)

func TestAppendCloseReopenReplay(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, testOptions())
	if l.FirstSeq() != 1 || l.LastSeq() != 0 {
		t.Fatalf("new log holds %d..%d, want 1..0", l.FirstSeq(), l.LastSeq())
	}
	checkReplay(t, l, 1, 0)
	l.Start()
	writeRecords(t, l, 50)
	if l.Durable() != 50 || l.LastSeq() != 50 {
		t.Fatalf("durable %d, last %d, want 50, 50", l.Durable(), l.LastSeq())
	}
	st := l.Stats()
	if st.Records != 50 || st.Fsyncs != st.Batches || st.DirFsyncs != 1 || st.FsyncTotal <= 0 {
		t.Fatalf("stats %+v", st)
	}
	mustClose(t, l)

	l = mustOpen(t, dir, testOptions())
	checkReplay(t, l, 1, 50)
	l.Start()
	writeRecords(t, l, 5)
	mustClose(t, l)
	l = mustOpen(t, dir, testOptions())
	checkReplay(t, l, 1, 55)
	mustClose(t, l)
}

func TestGroupCommitConcurrentProducers(t *testing.T) {
	const producers, perProducer, queue = 16, 50, 16
	dir := t.TempDir()
	opts := testOptions()
	opts.QueueRecords = queue
	opts.MaxBatchRecords = 64
	l := mustOpen(t, dir, opts)
	l.Start()
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for range producers {
		wg.Go(func() {
			for range perProducer {
				seq, err := l.Next()
				if err != nil {
					errs <- err
					return
				}
				// The queue bound: never more than QueueRecords reserved
				// past what is written.
				if last := l.LastSeq(); seq > last+queue {
					t.Errorf("reserved seq %d with only %d written, queue %d", seq, last, queue)
				}
				done := make(chan error, 1)
				l.Append(seq, recordFor(seq), done)
				if err := <-done; err != nil {
					errs <- err
					return
				}
				if d := l.Durable(); d < seq {
					t.Errorf("seq %d acknowledged with durable %d", seq, d)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := l.Stats()
	t.Logf("%d records in %d batches (largest %d)", st.Records, st.Batches, st.MaxBatchRecords)
	if st.Records != producers*perProducer || st.MaxBatchRecords > 64 {
		t.Fatalf("stats %+v", st)
	}
	mustClose(t, l)
	l = mustOpen(t, dir, testOptions())
	checkReplay(t, l, 1, producers*perProducer)
	mustClose(t, l)
}

func TestAppendInRandomOrder(t *testing.T) {
	const n = 300
	seed := uint64(7)
	t.Logf("seed %d", seed)
	dir := t.TempDir()
	l := mustOpen(t, dir, testOptions())
	l.Start()
	seqs := make([]uint64, n)
	for i := range seqs {
		var err error
		if seqs[i], err = l.Next(); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(seed, seed))
	r.Shuffle(len(seqs), func(i, j int) { seqs[i], seqs[j] = seqs[j], seqs[i] })
	dones := make(map[uint64]chan error)
	for _, seq := range seqs {
		dones[seq] = make(chan error, 1)
		l.Append(seq, recordFor(seq), dones[seq])
	}
	for seq, done := range dones {
		if err := <-done; err != nil {
			t.Fatalf("seq %d: %v", seq, err)
		}
	}
	mustClose(t, l)
	l = mustOpen(t, dir, testOptions())
	checkReplay(t, l, 1, n)
	mustClose(t, l)
}

// barrier returns once the writer has made a commit pass after everything
// the caller did before: a TruncateFront to the first seq truncates nothing
// but commits the records ready first.
func barrier(t *testing.T, l *Log) {
	t.Helper()
	if err := l.TruncateFront(t.Context(), l.FirstSeq()); err != nil {
		t.Fatalf("barrier: %v", err)
	}
}

func TestOutOfOrderRecordWaitsForGap(t *testing.T) {
	l := mustOpen(t, t.TempDir(), testOptions())
	l.Start()
	s1, _ := l.Next()
	s2, _ := l.Next()
	done1, done2 := make(chan error, 1), make(chan error, 1)
	l.Append(s2, recordFor(s2), done2)
	barrier(t, l)
	select {
	case err := <-done2:
		t.Fatalf("seq 2 acknowledged (%v) before seq 1 was appended", err)
	default:
	}
	if l.LastSeq() != 0 || l.Durable() != 0 {
		t.Fatalf("last %d, durable %d before seq 1 was appended", l.LastSeq(), l.Durable())
	}
	l.Append(s1, recordFor(s1), done1)
	if err := <-done1; err != nil {
		t.Fatal(err)
	}
	if err := <-done2; err != nil {
		t.Fatal(err)
	}
	if err := l.WaitDurable(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
}

func TestFsyncFailureIsSticky(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions()
	// Sync 1 of the directory is Open's; sync 2 is the first commit's.
	opts.FS = vfs.NewErrorFS(vfs.Default(), vfs.FailFrom(vfs.And(vfs.Kinds(vfs.OpSync), vfs.Under(dir)), 2))
	l := mustOpen(t, dir, opts)
	l.Start()
	var seqs [4]uint64
	for i := range seqs {
		seqs[i], _ = l.Next()
	}
	dones := make([]chan error, 4)
	for i := range dones {
		dones[i] = make(chan error, 1)
	}
	// 2 and 3 wait for 1, so all three go into the failing commit.
	l.Append(seqs[2], recordFor(seqs[2]), dones[2])
	l.Append(seqs[1], recordFor(seqs[1]), dones[1])
	l.Append(seqs[0], recordFor(seqs[0]), dones[0])
	for i := range 3 {
		if err := <-dones[i]; !errors.Is(err, ErrFailed) || !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("seq %d: got %v, want ErrFailed wrapping the injected error", seqs[i], err)
		}
	}
	// A record appended after the failure gets the error too.
	l.Append(seqs[3], recordFor(seqs[3]), dones[3])
	if err := <-dones[3]; !errors.Is(err, ErrFailed) {
		t.Fatalf("seq %d appended after the failure: got %v, want ErrFailed", seqs[3], err)
	}
	if _, err := l.Next(); !errors.Is(err, ErrFailed) {
		t.Fatalf("next after the failure: %v, want ErrFailed", err)
	}
	if err := l.WaitDurable(t.Context(), 1); !errors.Is(err, ErrFailed) {
		t.Fatalf("wait durable after the failure: %v, want ErrFailed", err)
	}
	if err := l.TruncateFront(t.Context(), 1); !errors.Is(err, ErrFailed) {
		t.Fatalf("truncate after the failure: %v, want ErrFailed", err)
	}
	if l.Durable() != 0 || !errors.Is(l.Err(), vfs.ErrInjected) {
		t.Fatalf("durable %d, err %v", l.Durable(), l.Err())
	}
	if err := l.Close(); !errors.Is(err, ErrFailed) {
		t.Fatalf("close: %v, want ErrFailed", err)
	}
}

func TestNextUnblocksOnFailure(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions()
	opts.QueueRecords = 1
	opts.FS = vfs.NewErrorFS(vfs.Default(), vfs.FailFrom(vfs.And(vfs.Kinds(vfs.OpSync), vfs.Under(dir)), 2))
	l := mustOpen(t, dir, opts)
	l.Start()
	s1, _ := l.Next()
	// The queue is full: this Next waits until seq 1's commit, which fails.
	next := make(chan error, 1)
	go func() {
		_, err := l.Next()
		next <- err
	}()
	done := make(chan error, 1)
	l.Append(s1, recordFor(s1), done)
	if err := <-done; !errors.Is(err, ErrFailed) {
		t.Fatalf("seq 1: %v", err)
	}
	if err := <-next; !errors.Is(err, ErrFailed) {
		t.Fatalf("blocked next: %v, want ErrFailed", err)
	}
	if err := l.Close(); !errors.Is(err, ErrFailed) {
		t.Fatalf("close: %v", err)
	}
}

func TestCloseFlushes(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, testOptions())
	// Appended before Start: Close starts the writer to flush them.
	var dones []chan error
	for range 10 {
		_, done := appendSeq(t, l)
		dones = append(dones, done)
	}
	l.Start()
	for range 10 {
		_, done := appendSeq(t, l)
		dones = append(dones, done)
	}
	mustClose(t, l)
	for i, done := range dones {
		if err := <-done; err != nil {
			t.Fatalf("seq %d: %v", i+1, err)
		}
	}
	if _, err := l.Next(); !errors.Is(err, ErrClosed) {
		t.Fatalf("next after close: %v, want ErrClosed", err)
	}
	if err := l.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second close: %v, want ErrClosed", err)
	}
	l = mustOpen(t, dir, testOptions())
	checkReplay(t, l, 1, 20)
	mustClose(t, l)
}

func TestCloseWithGap(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, testOptions())
	l.Start()
	s1, _ := l.Next()
	s2, _ := l.Next()
	done1, done2 := make(chan error, 1), make(chan error, 1)
	l.Append(s2, recordFor(s2), done2)
	mustClose(t, l)
	if err := <-done2; !errors.Is(err, ErrClosed) {
		t.Fatalf("seq 2 behind a gap: %v, want ErrClosed", err)
	}
	l.Append(s1, recordFor(s1), done1)
	if err := <-done1; !errors.Is(err, ErrClosed) {
		t.Fatalf("seq 1 appended after close: %v, want ErrClosed", err)
	}
	if err := l.WaitDurable(t.Context(), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("wait durable after close: %v, want ErrClosed", err)
	}
	l = mustOpen(t, dir, testOptions())
	checkReplay(t, l, 1, 0)
	mustClose(t, l)
}

func TestWaitDurable(t *testing.T) {
	l := mustOpen(t, t.TempDir(), testOptions())
	l.Start()
	writeRecords(t, l, 3)
	if err := l.WaitDurable(t.Context(), 3); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := l.WaitDurable(ctx, 4); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait for an unwritten seq with a cancelled context: %v", err)
	}
	// A waiter blocked before the commit is woken by it.
	seq, err := l.Next()
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- l.WaitDurable(t.Context(), seq) }()
	l.Append(seq, recordFor(seq), nil)
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
}

func TestReplayRules(t *testing.T) {
	dir := t.TempDir()
	createLog(t, dir, 10, testOptions())
	l := mustOpen(t, dir, testOptions())
	for _, from := range []uint64{0, 12} {
		if err := l.Replay(from, nil); !errors.Is(err, ErrOutOfRange) {
			t.Fatalf("replay from %d: %v, want ErrOutOfRange", from, err)
		}
	}
	n := 0
	if err := l.Replay(7, func(seq uint64, _ *core.Record) error { n++; return nil }); err != nil || n != 4 {
		t.Fatalf("replay from 7: %d records, %v", n, err)
	}
	stop := errors.New("stop")
	if err := l.Replay(1, func(uint64, *core.Record) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("replay with a failing fn: %v", err)
	}
	l.Start()
	if err := l.Replay(1, nil); !errors.Is(err, ErrStarted) {
		t.Fatalf("replay after start: %v, want ErrStarted", err)
	}
	mustClose(t, l)
}

func TestTruncateFront(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions()
	opts.SegmentSizeBytes = 2048
	createLog(t, dir, 100, opts)
	if n := len(segmentNames(t, dir)); n < 5 {
		t.Fatalf("%d segments, want several", n)
	}
	l := mustOpen(t, dir, opts)
	l.Start()
	if err := l.TruncateFront(t.Context(), 102); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("truncate past the end: %v, want ErrOutOfRange", err)
	}
	if err := l.TruncateFront(t.Context(), 60); err != nil {
		t.Fatal(err)
	}
	if err := l.TruncateFront(t.Context(), 40); err != nil { // before the front: nothing
		t.Fatal(err)
	}
	if l.FirstSeq() != 60 || l.Err() != nil {
		t.Fatalf("first %d, err %v", l.FirstSeq(), l.Err())
	}
	writeRecords(t, l, 5)
	mustClose(t, l)
	if segs := segmentNames(t, dir); segs[0] != segmentName(60) {
		t.Fatalf("segments %v, want the first named %s", segs, segmentName(60))
	}

	l = mustOpen(t, dir, opts)
	checkReplay(t, l, 60, 105)
	if err := l.Replay(59, nil); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("replay before the front: %v", err)
	}
	l.Start()
	// Truncating everything leaves an empty log that keeps its numbering.
	if err := l.TruncateFront(t.Context(), 106); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	l = mustOpen(t, dir, opts)
	checkReplay(t, l, 106, 105)
	l.Start()
	writeRecords(t, l, 3)
	mustClose(t, l)
	l = mustOpen(t, dir, opts)
	checkReplay(t, l, 106, 108)
	mustClose(t, l)
}

func TestNoFsync(t *testing.T) {
	var logs syncBuffer
	opts := testOptions()
	opts.NoFsync = true
	opts.Logger = slogTo(&logs)
	dir := t.TempDir()
	l := mustOpen(t, dir, opts)
	l.Start()
	writeRecords(t, l, 20)
	if st := l.Stats(); st.Fsyncs != 0 || st.DirFsyncs != 0 || st.Records != 20 {
		t.Fatalf("stats %+v", st)
	}
	mustClose(t, l)
	if !containsAll(logs.String(), "FSYNC IS OFF", filepath.Base(dir)) {
		t.Fatalf("no warning logged: %q", logs.String())
	}
	l = mustOpen(t, dir, testOptions())
	checkReplay(t, l, 1, 20)
	mustClose(t, l)
}

func TestOptionsRejected(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"negative segment size", Options{SegmentSizeBytes: -1}},
		{"negative batch records", Options{MaxBatchRecords: -1}},
		{"negative batch bytes", Options{MaxBatchBytes: -1}},
		{"negative queue", Options{QueueRecords: -1}},
		{"huge queue", Options{QueueRecords: 1 << 30}},
		{"negative slow fsync", Options{SlowFsync: -1}},
		{"negative commit interval", Options{CommitInterval: -1}},
		{"commit interval too long", Options{CommitInterval: MaxCommitInterval + 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if l, err := Open(t.TempDir(), tc.opts); err == nil {
				t.Fatalf("open with %+v succeeded (close: %v)", tc.opts, l.Close())
			}
		})
	}
}

// startSegmentedLog writes records 1..100 to a log of 2 KiB segments,
// opens and starts it, and returns it with its SegmentStarts.
func startSegmentedLog(t *testing.T) (string, Options, *Log, []uint64) {
	t.Helper()
	dir := t.TempDir()
	opts := testOptions()
	opts.SegmentSizeBytes = 2048
	createLog(t, dir, 100, opts)
	l := mustOpen(t, dir, opts)
	l.Start()
	starts, err := l.SegmentStarts()
	if err != nil {
		t.Fatal(err)
	}
	return dir, opts, l, starts
}

// TestSegmentStarts checks that SegmentStarts lists the segment files'
// first records, and that a truncation to the last record of a segment
// keeps that record alone in a segment of its own, the log whole after it,
// across a reopen.
func TestSegmentStarts(t *testing.T) {
	dir, opts, l, starts := startSegmentedLog(t)
	var want []uint64
	for _, name := range segmentNames(t, dir) {
		var idx uint64
		if _, err := fmt.Sscanf(name, "%020d", &idx); err != nil {
			t.Fatalf("segment name %q: %v", name, err)
		}
		want = append(want, idx)
	}
	if len(starts) < 4 || !slices.Equal(starts, want) || starts[0] != 1 {
		t.Fatalf("SegmentStarts %v, want %v (several, the first 1)", starts, want)
	}
	cut := starts[2] - 1 // the last record of the second segment
	if err := l.TruncateFront(t.Context(), cut); err != nil {
		t.Fatal(err)
	}
	got, err := l.SegmentStarts()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, append([]uint64{cut}, starts[2:]...)) {
		t.Fatalf("after the cut at %d: SegmentStarts %v, want %d then %v", cut, got, cut, starts[2:])
	}
	mustClose(t, l)
	l = mustOpen(t, dir, opts)
	checkReplay(t, l, cut, 100)
	mustClose(t, l)
}

// TestTruncateFrontLinks checks that the segment files a truncation drops
// are gone once TruncateFront returns, their NAME.TRIM links included, and
// that Open removes NAME.TRIM files a crash left behind without touching
// the log.
func TestTruncateFrontLinks(t *testing.T) {
	dir, opts, l, starts := startSegmentedLog(t)
	if err := l.TruncateFront(t.Context(), starts[2]+1); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	names := segmentNames(t, dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != len(names) || names[0] != segmentName(starts[2]+1) {
		t.Fatalf("after the truncation: files %v, segments %v (want only segments, the first %s)", ents, names, segmentName(starts[2]+1))
	}
	// A crash between the link and its removal leaves a second name to a
	// file the log dropped, or to one it keeps.
	kept := filepath.Join(dir, names[1])
	if err := os.Link(kept, kept+trimLinkSuffix); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, segmentName(1)+trimLinkSuffix), []byte("dropped"), 0o640); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, dir, opts)
	checkReplay(t, l, starts[2]+1, 100)
	mustClose(t, l)
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != len(names) {
		t.Fatalf("after Open: %d files (err %v), want the %d segments", len(ents), err, len(names))
	}
}
