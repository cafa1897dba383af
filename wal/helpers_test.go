package wal

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"marketd/core"
	"marketd/internal/vfs"
	"marketd/wal/record"
	"marketd/wal/record/recordgen"
)

// recordFor is the record the tests write at seq: random, reproducible from
// seq alone, so that a replay can be checked without keeping what was
// written.
func recordFor(seq uint64) *core.Record { return recordgen.New(seq).Record() }

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testOptions are quiet options; fsync stays on unless a test turns it off.
func testOptions() Options {
	return Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func mustOpen(t *testing.T, dir string, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return l
}

func mustClose(t *testing.T, l *Log) {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// appendSeq reserves the next seq, appends recordFor(seq) and returns the
// seq and its done channel.
func appendSeq(t *testing.T, l *Log) (uint64, chan error) {
	t.Helper()
	seq, err := l.Next()
	if err != nil {
		t.Fatalf("next: %v", err)
	}
	done := make(chan error, 1)
	l.Append(seq, recordFor(seq), done)
	return seq, done
}

// writeRecords appends n records one after the other and waits for each.
func writeRecords(t *testing.T, l *Log, n int) {
	t.Helper()
	for range n {
		seq, done := appendSeq(t, l)
		if err := <-done; err != nil {
			t.Fatalf("seq %d: %v", seq, err)
		}
	}
}

// createLog writes records 1..n to a new log in dir and closes it.
func createLog(t *testing.T, dir string, n int, opts Options) {
	t.Helper()
	l := mustOpen(t, dir, opts)
	l.Start()
	var dones []chan error
	for range n {
		_, done := appendSeq(t, l)
		dones = append(dones, done)
	}
	for i, done := range dones {
		if err := <-done; err != nil {
			t.Fatalf("seq %d: %v", i+1, err)
		}
	}
	mustClose(t, l)
}

// checkReplay replays l from its first seq and checks it holds exactly
// recordFor(first..last).
func checkReplay(t *testing.T, l *Log, first, last uint64) {
	t.Helper()
	checkReplayOf(t, l, first, last, recordFor)
}

// checkReplayOf is checkReplay for the records recordAt(first..last).
func checkReplayOf(t *testing.T, l *Log, first, last uint64, recordAt func(seq uint64) *core.Record) {
	t.Helper()
	if l.FirstSeq() != first || l.LastSeq() != last {
		t.Fatalf("log holds %d..%d, want %d..%d", l.FirstSeq(), l.LastSeq(), first, last)
	}
	want := first
	err := l.Replay(first, func(seq uint64, rec *core.Record) error {
		if seq != want {
			t.Fatalf("replayed seq %d, want %d", seq, want)
		}
		if w := recordAt(seq); !reflect.DeepEqual(rec, w) {
			t.Fatalf("seq %d: replayed %+v, want %+v", seq, rec, w)
		}
		want++
		return nil
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if want != last+1 {
		t.Fatalf("replay ended before %d, want %d", want, last+1)
	}
}

// copyDir copies the regular files of src into a new temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// segmentNames lists the plain segment files of dir in order.
func segmentNames(t *testing.T, dir string) []string {
	t.Helper()
	segs, err := listSegments(vfs.Default(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range segs {
		names = append(names, s.name)
	}
	return names
}

// entryEnds returns the byte offset at which each entry of a segment ends.
func entryEnds(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ends []int
	for off := 0; off < len(data); {
		_, n := nextEntry(data[off:])
		if n == 0 {
			t.Fatalf("%s: bad entry at %d", path, off)
		}
		off += n
		ends = append(ends, off)
	}
	return ends
}

func segmentName(index uint64) string { return fmt.Sprintf("%020d", index) }

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// stageAndCommit is the writer's work for a test that is the writer (Start
// not called): it puts 1-40 records (r's choice) from seq on in the log's
// slots, as Append would, commits them, calling check after each commit,
// and returns the next seq.
func stageAndCommit(t *testing.T, l *Log, r *rand.Rand, seq uint64, check func(seq uint64)) uint64 {
	t.Helper()
	for range 1 + r.IntN(40) {
		l.slots[seq&l.slotMask].Store(&entry{seq: seq, frame: record.AppendFramed(nil, seq, recordFor(seq))})
		seq++
	}
	for {
		n, err := l.commit()
		if err != nil {
			t.Fatalf("commit before seq %d: %v", seq, err)
		}
		if n == 0 {
			return seq
		}
		check(seq)
	}
}

// openAsWriter opens a log in a new directory with opts for a test that
// is its writer (stageAndCommit), with a seeded random source and a
// releaser started (released closes when it ends). It skips the test,
// saying why (skipWhy), where tidwall's segment layout is unknown.
func openAsWriter(t *testing.T, opts Options, skipWhy string) (l *Log, r *rand.Rand, dir string, released chan struct{}) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r = rand.New(rand.NewPCG(seed, seed))
	dir = t.TempDir()
	l = mustOpen(t, dir, opts)
	if l.segBuf.segs == nil {
		mustClose(t, l)
		t.Skip("wal: tidwall's segment layout is unknown: " + skipWhy)
	}
	// Start is not called, so the log's files and its tracker are the
	// test goroutine's; a releaser takes the commits.
	released = make(chan struct{})
	go l.release(released)
	return l, r, dir, released
}
