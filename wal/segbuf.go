package wal

import (
	"reflect"
	"unsafe"

	tidwall "github.com/tidwall/wal"
)

// Tidwall keeps the whole current segment in memory: WriteBatch appends
// every entry to a byte slice (its segment.ebuf) and its position to a
// second one (segment.epos), both started empty for each new segment and
// grown by append. Go grows a large slice by a quarter, so a segment of S
// bytes allocates about 5 S over its life and copies its bytes about four
// times, and the fresh pages fault in: with 1 MiB segments, 1.4 KB of
// garbage per 290-byte record and, in the log-only pipeline, the largest
// single cost of the writer goroutine, which every commit waits for
// (docs/PERFORMANCE.md, "The log against a bare write"). Tidwall's API
// offers no way to size or reuse these slices, so the writer does it in
// tidwall's own segment records:
//
//   - each new tail segment gets a buffer of SegmentSizeBytes plus
//     segmentSlack bytes before anything is appended to it, so that
//     appends never reallocate it;
//   - the buffer of a segment that tidwall has dropped from memory (it
//     sets the slices to nil when its segment cache evicts it) is used
//     again for a later segment, so that a steady log allocates nothing;
//   - a commit ends with the entry that fills the segment (commit and
//     write, writer.go): tidwall starts the next segment at once after
//     that entry, inside the same WriteBatch, and the rest of the batch
//     would otherwise be appended to the new segment's empty slice before
//     a buffer could be put there.
//
// Only the slices' backing arrays change: their contents, lengths and
// every other field stay tidwall's, and tidwall reads them as it would its
// own. The layout of tidwall's unexported types is checked against
// twSegment by reflection at Open (tidwallSegments); any difference (a new
// tidwall version) turns this off and tidwall grows its slices as before.
// TestTidwallLayoutKnown fails then, so that an upgrade is noticed.

// twSegment mirrors tidwall's segment (wal.go @ v1.2.1).
//
// Fields this package never reads are still declared: they are tidwall's,
// and sameLayout compares them by name, offset and type.
type twSegment struct {
	path string // path of segment file
	//lint:ignore U1000 tidwall's field, compared by sameLayout
	index uint64  // first index of segment
	ebuf  []byte  // cached entries buffer
	epos  []twPos // cached entries positions in buffer
}

// twPos mirrors tidwall's bpos.
type twPos struct {
	//lint:ignore U1000 tidwall's field, compared by sameLayout
	pos int // byte position
	//lint:ignore U1000 tidwall's field, compared by sameLayout
	end int // one byte past pos
}

// segmentSlack is the room past SegmentSizeBytes in a segment buffer: a
// segment ends with the entry that reaches SegmentSizeBytes, so it runs
// past by less than one entry. A larger entry makes tidwall grow the slice
// as it always did.
func segmentSlack(size int) int { return max(4<<10, size/16) }

// eposPerByte sizes a new segment's position slice: one position per 128
// bytes of segment, more than a trade record needs (about 290 bytes). A
// segment of smaller records grows it, once; its reuse keeps the larger one.
const eposPerByte = 128

// spareBuffers bounds the segment buffers kept for reuse.
const spareBuffers = 2

// segmentBuffers gives tidwall's tail segment a buffer of its final size.
// Owned by the writer goroutine, like the tidwall log.
type segmentBuffers struct {
	segs    *[]*twSegment // tidwall's Log.segments; nil when the layout is unknown
	size    int           // SegmentSizeBytes
	tail    *twSegment    // the segment the last buffer was put in
	retired []retiredSegment
}

// retiredSegment is a segment that had one of our buffers when it stopped
// being the tail; the buffers come back once tidwall has let go of them.
type retiredSegment struct {
	seg  *twSegment
	ebuf []byte
	epos []twPos
}

// newSegmentBuffers prepares the buffers of tw, a log opened with
// SegmentSize size; it does nothing when tidwall's layout is not the known
// one.
func newSegmentBuffers(tw *tidwall.Log, size int) segmentBuffers {
	return segmentBuffers{segs: tidwallSegments(tw), size: size}
}

// room returns the bytes tidwall will append to the current segment before
// it starts a new one: the batch must end with the entry that reaches it.
// It returns 0 when the segment is unknown or already past its size (tidwall
// then starts a new segment before the next batch).
func (s *segmentBuffers) room() int {
	if s.segs == nil || len(*s.segs) == 0 {
		return 0
	}
	segs := *s.segs
	return max(0, s.size-len(segs[len(segs)-1].ebuf))
}

// install gives the tail segment a buffer of the full size if it does not
// have one: after Open, after each WriteBatch (which may have started a new
// segment) and after a truncation (which reloads the tail from its file).
// The tail's contents are copied into the buffer, so it can be called at
// any time. It reports whether the tail is a different segment than at the
// last call: tidwall started a new one meanwhile.
func (s *segmentBuffers) install() (newTail bool) {
	if s.segs == nil || len(*s.segs) == 0 {
		return false
	}
	segs := *s.segs
	tail := segs[len(segs)-1]
	newTail = s.tail != nil && tail != s.tail
	want := s.size + segmentSlack(s.size)
	if tail == s.tail && cap(tail.ebuf) >= want {
		return false
	}
	if s.tail != nil && s.tail != tail {
		s.retire(s.tail)
	}
	ebuf, epos := s.spare()
	if cap(ebuf) < want {
		ebuf = make([]byte, 0, want)
	}
	if n := s.size / eposPerByte; cap(epos) < n {
		epos = make([]twPos, 0, n)
	}
	tail.ebuf = append(ebuf, tail.ebuf...)
	tail.epos = append(epos, tail.epos...)
	s.tail = tail
	return newTail
}

// tailSpare returns the n bytes of the tail segment's buffer past its
// entries, for staging a commit there (staged.go), or nil when the layout
// is unknown, the buffer lacks the room, or the tail is already past its
// size (tidwall would start a new segment before appending).
func (s *segmentBuffers) tailSpare(n int) []byte {
	if s.segs == nil || len(*s.segs) == 0 {
		return nil
	}
	segs := *s.segs
	ebuf := segs[len(segs)-1].ebuf
	if len(ebuf) > s.size || cap(ebuf)-len(ebuf) < n {
		return nil
	}
	return ebuf[len(ebuf) : len(ebuf)+n]
}

// tailEmpty reports whether tidwall's current segment holds no entry; false
// when the layout is unknown.
func (s *segmentBuffers) tailEmpty() bool {
	if s.segs == nil || len(*s.segs) == 0 {
		return false
	}
	segs := *s.segs
	return len(segs[len(segs)-1].epos) == 0
}

// tailSegment returns tidwall's record of its current segment, or nil when
// the layout is unknown.
func (s *segmentBuffers) tailSegment() *twSegment {
	if s.segs == nil || len(*s.segs) == 0 {
		return nil
	}
	segs := *s.segs
	return segs[len(segs)-1]
}

// retire keeps seg's buffers for reuse once tidwall drops them.
func (s *segmentBuffers) retire(seg *twSegment) {
	if cap(seg.ebuf) < s.size {
		return // not one of ours, or tidwall has let it go already
	}
	if len(s.retired) == spareBuffers {
		// Tidwall still holds the oldest: leave it to the collector.
		s.retired = append(s.retired[:0], s.retired[1:]...)
	}
	s.retired = append(s.retired, retiredSegment{seg: seg, ebuf: seg.ebuf[:0], epos: seg.epos[:0]})
}

// spare returns, and forgets, the buffers of a retired segment that tidwall
// no longer refers to: its segment cache evicted it (tidwall sets its
// slices to nil) or a truncation replaced them. Tidwall keeps no other
// reference to a segment's slices.
func (s *segmentBuffers) spare() ([]byte, []twPos) {
	for i, r := range s.retired {
		if unsafe.SliceData(r.seg.ebuf) != unsafe.SliceData(r.ebuf) &&
			unsafe.SliceData(r.seg.epos) != unsafe.SliceData(r.epos) {
			s.retired = append(s.retired[:i], s.retired[i+1:]...)
			return r.ebuf, r.epos
		}
	}
	return nil, nil
}

// tidwallSegments returns a pointer to tw's segment list, or nil when
// tidwall's Log and segment types are not laid out as twSegment expects.
func tidwallSegments(tw *tidwall.Log) *[]*twSegment {
	f, ok := reflect.TypeFor[tidwall.Log]().FieldByName("segments")
	if !ok || !sameLayout(f.Type, reflect.TypeFor[[]*twSegment]()) {
		return nil
	}
	return (*[]*twSegment)(unsafe.Add(unsafe.Pointer(tw), f.Offset))
}

// sameLayout reports whether a value of type a can be read as one of type
// b: the same kinds and sizes, and for structs the same field names,
// offsets and field layouts.
func sameLayout(a, b reflect.Type) bool {
	if a.Kind() != b.Kind() || a.Size() != b.Size() {
		return false
	}
	switch a.Kind() {
	case reflect.Slice, reflect.Pointer:
		return sameLayout(a.Elem(), b.Elem())
	case reflect.Struct:
		if a.NumField() != b.NumField() {
			return false
		}
		for i := range a.NumField() {
			fa, fb := a.Field(i), b.Field(i)
			if fa.Name != fb.Name || fa.Offset != fb.Offset || !sameLayout(fa.Type, fb.Type) {
				return false
			}
		}
		return true
	case reflect.String, reflect.Int, reflect.Uint64, reflect.Uint8:
		return true
	default:
		return false
	}
}
