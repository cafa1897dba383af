package wal

import (
	"runtime/metrics"
	"testing"

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
// through the writer's write step and checks that tidwall's segment
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
	// files and buffers are this goroutine's.
	frame := record.AppendFramed(nil, 1, recordFor(1))
	records := 20 * segBytes / len(frame)
	entries := make([]*entry, 0, records)
	for seq := uint64(1); seq <= uint64(records); seq++ {
		entries = append(entries, &entry{seq: seq, frame: record.AppendFramed(nil, seq, recordFor(seq))})
	}
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocated := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	var during uint64
	for i := 0; i < len(entries); i += commitRecords {
		l.pending = append(l.pending[:0], entries[i:min(i+commitRecords, len(entries))]...)
		a0 := allocated()
		if err := l.write(); err != nil {
			t.Fatalf("write seq %d: %v", i+1, err)
		}
		if i >= 4*commitRecords { // after the batch's own buffer has grown
			during += allocated() - a0
		}
	}
	l.pending = l.pending[:0]
	l.lastSeq.Store(uint64(records))
	segs := len(segmentNames(t, dir))
	if segs < 15 {
		t.Fatalf("%d segments, want about 20", segs)
	}
	// A buffer is segBytes plus its slack and positions; three are made
	// (the tail, the one tidwall caches, the next), then reused. File
	// opens allocate a little per segment.
	t.Logf("%d segments, %d bytes allocated by the writes", segs, during)
	if limit := uint64(4 * segBytes); during > limit {
		t.Errorf("writing %d segments allocated %d bytes, limit %d: segment buffers are not reused", segs, during, limit)
	}
	mustClose(t, l)
	l = mustOpen(t, dir, opts)
	defer mustClose(t, l)
	checkReplay(t, l, 1, uint64(records))
}
