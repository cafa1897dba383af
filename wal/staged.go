package wal

import (
	"reflect"
	"unsafe"

	tidwall "github.com/tidwall/wal"
)

// A record's frame is copied twice on the writer goroutine besides the
// kernel's copy into the page cache: tidwall's Batch.Write copies it into
// the batch's own buffer, and WriteBatch copies it from there, behind a
// uvarint length, into the tail segment's in-memory buffer (segbuf.go),
// which write(2) then hands to the kernel. The batch's buffer is lines
// written and read once more per record (about 280 bytes of a trade
// record): with 64 markets' goroutines and their callers on the same
// cores, the log's bytes streaming through the first-level cache evict
// the trades' own state (docs/PERFORMANCE.md, "The log's bytes on the
// writer").
//
// So the writer puts the frames where tidwall will copy them to: into the
// spare room of the tail segment's buffer, right after its entries, shifted
// forward by the length prefixes tidwall will write in front of them, and
// hands tidwall a batch whose data is that run of frames. WriteBatch then
// appends each entry to the segment buffer as always: its length prefix,
// then its frame copied from a few bytes further on in the same buffer
// (append copies with memmove, which allows the overlap). Entry i's prefix
// and frame end at or before the start of frame i+1's staged bytes, since
// the frames were shifted by the sum of all the prefixes, so nothing is
// overwritten before it is read; the segment ends up byte for byte as if
// the batch had been copied. Tidwall's copy now moves bytes within lines
// the writer has just written instead of from a second buffer.
//
// Staging needs tidwall's Batch laid out as twBatch (checked by reflection
// at start-up, like twSegment) and the whole commit to fit in the tail's
// buffer without tidwall starting a new segment before it (commit ends at
// the record that fills a segment, so it does, unless a frame is larger
// than the buffer's slack). Otherwise the writer fills the batch by
// Batch.Write, as before. If tidwall ever had to grow the segment's slice
// while appending, the staged frames would still be read from the old
// array, which the batch keeps alive: correct, just not copy-free.

// twBatch mirrors tidwall's Batch (wal.go @ v1.2.1).
type twBatch struct {
	entries []twBatchEntry
	datas   []byte
}

// twBatchEntry mirrors tidwall's batchEntry.
type twBatchEntry struct {
	index uint64
	size  int
}

// batchLayoutKnown reports whether tidwall's Batch is laid out as twBatch.
var batchLayoutKnown = sameLayout(reflect.TypeFor[tidwall.Batch](), reflect.TypeFor[twBatch]())

// stagedBatch returns b seen as twBatch, or nil when the layout is unknown.
func stagedBatch(b *tidwall.Batch) *twBatch {
	if !batchLayoutKnown {
		return nil
	}
	return (*twBatch)(unsafe.Pointer(b))
}

// stage fills the batch with the pending records' frames staged in the
// tail segment's spare room (see above) and reports whether it did; when
// it did not, the batch is untouched. bytes is the frames' total size,
// stored the size tidwall will append for them (frames and length
// prefixes).
func (l *Log) stage(bytes, stored int) bool {
	tb := stagedBatch(&l.batch)
	if tb == nil || len(tb.entries) != 0 {
		return false
	}
	spare := l.segBuf.tailSpare(stored)
	if spare == nil {
		return false
	}
	off := stored - bytes // the length prefixes go first
	start := off
	for _, e := range l.pending {
		off += copy(spare[off:], e.frame)
		tb.entries = append(tb.entries, twBatchEntry{index: e.seq, size: len(e.frame)})
	}
	l.batchData = tb.datas[:0]
	// Capped at its end, so that nothing appended to the batch's data by
	// mistake could reach past the staged frames.
	tb.datas = spare[start:off:off]
	return true
}

// unstage gives the batch its own buffer back after a staged WriteBatch,
// so that it never refers to the segment's buffer past the commit (a
// later Batch.Write would otherwise append into the segment).
func (l *Log) unstage() {
	tb := stagedBatch(&l.batch)
	tb.entries = tb.entries[:0]
	tb.datas = l.batchData
	l.batchData = nil
}
