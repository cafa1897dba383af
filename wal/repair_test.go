package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"marketd/core"
	"marketd/internal/vfs"
	"marketd/wal/record"
)

// damage is one way of damaging the last segment: it returns the new
// content and the number of whole records expected to survive.
type damage struct {
	name  string
	apply func(data []byte, ends []int) (out []byte, keep int)
}

// cutAt cuts the file at off; the records whose entries end at or before
// off survive.
func cutAt(data []byte, ends []int, off int) ([]byte, int) {
	keep := 0
	for keep < len(ends) && ends[keep] <= off {
		keep++
	}
	return data[:off], keep
}

func tornTailDamages(ends []int) []damage {
	var ds []damage
	starts := append([]int{0}, ends[:len(ends)-1]...)
	for i, start := range starts {
		end := ends[i]
		for _, off := range []int{start, start + 1, (start + end) / 2, end - 1} {
			ds = append(ds, damage{
				name:  fmt.Sprintf("cut record %d at byte %d", i, off),
				apply: func(data []byte, ends []int) ([]byte, int) { return cutAt(data, ends, off) },
			})
		}
	}
	for _, n := range []int{1, 8, 4096} {
		ds = append(ds, damage{
			name: fmt.Sprintf("%d zero bytes appended", n),
			apply: func(data []byte, ends []int) ([]byte, int) {
				return append(data, make([]byte, n)...), len(ends)
			},
		})
	}
	ds = append(ds,
		damage{"garbage appended", func(data []byte, ends []int) ([]byte, int) {
			return append(data, bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef, 0xF9, 0xC1, 0x01}, 100)...), len(ends)
		}},
		damage{"last record zero-filled", func(data []byte, ends []int) ([]byte, int) {
			out := bytes.Clone(data)
			clear(out[ends[len(ends)-2]:])
			return out, len(ends) - 1
		}},
		damage{"bit flip in the last record", func(data []byte, ends []int) ([]byte, int) {
			out := bytes.Clone(data)
			out[len(out)-10] ^= 0x10
			return out, len(ends) - 1
		}},
		damage{"half of a next record appended", func(data []byte, ends []int) ([]byte, int) {
			next := record.AppendFramed(nil, uint64(len(ends)+1), recordFor(uint64(len(ends)+1)))
			entry := append(appendUvarintTest(nil, uint64(len(next))), next...)
			return append(data, entry[:len(entry)/2]...), len(ends)
		}},
	)
	return ds
}

func appendUvarintTest(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func TestRepairTornTail(t *testing.T) {
	const n = 8
	template := t.TempDir()
	createLog(t, template, n, testOptions())
	segs := segmentNames(t, template)
	if len(segs) != 1 {
		t.Fatalf("segments %v, want one", segs)
	}
	ends := entryEnds(t, filepath.Join(template, segs[0]))
	original, err := os.ReadFile(filepath.Join(template, segs[0]))
	if err != nil {
		t.Fatal(err)
	}

	for _, d := range tornTailDamages(ends) {
		t.Run(d.name, func(t *testing.T) {
			dir := copyDir(t, template)
			path := filepath.Join(dir, segs[0])
			damaged, keep := d.apply(bytes.Clone(original), ends)
			if err := os.WriteFile(path, damaged, 0o640); err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			opts := testOptions()
			opts.Logger = slogTo(&logs)
			l := mustOpen(t, dir, opts)
			checkReplay(t, l, 1, uint64(keep))

			wantCut := len(damaged) - endOf(ends, keep)
			repaired := wantCut > 0
			st := l.Stats()
			if repaired != (st.TornTailRepairs == 1) || st.TornBytesCut != uint64(wantCut) {
				t.Fatalf("stats %+v, want repaired %v, %d bytes cut", st, repaired, wantCut)
			}
			if repaired {
				broken, err := os.ReadFile(path + ".broken")
				if err != nil || !bytes.Equal(broken, damaged) {
					t.Fatalf("copy aside: %v, equal %v", err, bytes.Equal(broken, damaged))
				}
				if !containsAll(logs.String(), "cut torn tail", path, fmt.Sprintf("offset=%d", endOf(ends, keep))) {
					t.Fatalf("repair not logged: %s", logs.String())
				}
			}

			// New records continue at the right seq, and the log reopens.
			l.Start()
			writeRecords(t, l, 2)
			mustClose(t, l)
			l = mustOpen(t, dir, testOptions())
			checkReplay(t, l, 1, uint64(keep+2))
			if st := l.Stats(); st.TornTailRepairs != 0 {
				t.Fatalf("second open repaired again: %+v", st)
			}
			mustClose(t, l)
		})
	}
}

// endOf is the byte offset at which the first keep entries end.
func endOf(ends []int, keep int) int {
	if keep == 0 {
		return 0
	}
	return ends[keep-1]
}

func TestRepairKeepsEarlierCopies(t *testing.T) {
	dir := t.TempDir()
	createLog(t, dir, 3, testOptions())
	path := filepath.Join(dir, segmentName(1))
	for i, want := range []string{".broken", ".broken.1", ".broken.2"} {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, 3+i)); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		l := mustOpen(t, dir, testOptions())
		mustClose(t, l)
		if _, err := os.Stat(path + want); err != nil {
			t.Fatalf("repair %d: %v", i, err)
		}
	}
	l := mustOpen(t, dir, testOptions())
	checkReplay(t, l, 1, 3)
	mustClose(t, l)
}

func TestRepairRefusesCorruption(t *testing.T) {
	const n = 12
	template := t.TempDir()
	createLog(t, template, n, testOptions())
	seg := segmentNames(t, template)[0]
	ends := entryEnds(t, filepath.Join(template, seg))
	mid := ends[4] // record 6 starts here; records 7..12 follow it

	tests := []struct {
		name   string
		off    int // byte to flip
		mask   byte
		wantAt int // byte offset the error names
	}{
		{"payload bit flip", mid + 30, 0x01, mid},
		{"crc bit flip", ends[5] - 1, 0x80, mid},
		{"length prefix change", mid, 0x01, mid},
		{"length prefix grows past the file", mid, 0x80, mid},
		{"first record", 5, 0x04, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, template)
			path := filepath.Join(dir, seg)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data[tc.off] ^= tc.mask
			if err := os.WriteFile(path, data, 0o640); err != nil {
				t.Fatal(err)
			}
			l, err := Open(dir, testOptions())
			if err == nil {
				_ = l.Close()
				t.Fatal("open succeeded")
			}
			if !errors.Is(err, ErrCorrupt) || !containsAll(err.Error(), path, fmt.Sprintf("at byte %d", tc.wantAt)) {
				t.Fatalf("got %v, want ErrCorrupt naming %s and byte %d", err, path, tc.wantAt)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, data) {
				t.Fatal("refused open changed the segment")
			}
			if _, err := os.Stat(path + ".broken"); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("refused open made a copy: %v", err)
			}
		})
	}
}

func TestRepairWholeLastSegment(t *testing.T) {
	template := t.TempDir()
	opts, segs, _ := createSegmentedLog(t, template)
	last := segs[len(segs)-1]
	lastIndex := segs[len(segs)-1].index

	tests := []struct {
		name string
		cut  func(size int) int
	}{
		{"cut to nothing", func(int) int { return 0 }},
		{"cut inside the first record", func(int) int { return 7 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, template)
			path := filepath.Join(dir, last.name)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data[:tc.cut(len(data))], 0o640); err != nil {
				t.Fatal(err)
			}
			l := mustOpen(t, dir, opts)
			checkReplay(t, l, 1, lastIndex-1)
			l.Start()
			writeRecords(t, l, 3)
			mustClose(t, l)
			l = mustOpen(t, dir, opts)
			checkReplay(t, l, 1, lastIndex+2)
			mustClose(t, l)
		})
	}
}

func TestRepairOnlySegmentAfterTruncation(t *testing.T) {
	// A log truncated at the front to seq 11, whose only segment 11 is then
	// torn away completely, is empty but keeps its numbering.
	dir := t.TempDir()
	l := mustOpen(t, dir, testOptions())
	l.Start()
	writeRecords(t, l, 12)
	if err := l.TruncateFront(t.Context(), 11); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	segs := segmentNames(t, dir)
	if len(segs) != 1 || segs[0] != segmentName(11) {
		t.Fatalf("segments %v", segs)
	}
	path := filepath.Join(dir, segs[0])
	if err := os.WriteFile(path, []byte{0x80}, 0o640); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, dir, testOptions())
	checkReplay(t, l, 11, 10)
	l.Start()
	writeRecords(t, l, 2)
	mustClose(t, l)
	l = mustOpen(t, dir, testOptions())
	checkReplay(t, l, 11, 12)
	mustClose(t, l)
}

func TestReplayRefusesOlderSegmentDamage(t *testing.T) {
	template := t.TempDir()
	opts, segs, _ := createSegmentedLog(t, template)
	ends := entryEnds(t, filepath.Join(template, segs[0].name))

	tests := []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"bit flip", func(b []byte) []byte { b[ends[1]+20] ^= 1; return b }, fmt.Sprintf("byte %d: seq 3", ends[1])},
		{"last record missing", func(b []byte) []byte { return b[:ends[len(ends)-2]] }, "want up to"},
		{"zeros appended", func(b []byte) []byte { return append(b, 0, 0) }, "past the segment's end"},
		{"torn record", func(b []byte) []byte { return b[:len(b)-3] }, "does not fit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, template)
			path := filepath.Join(dir, segs[0].name)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.damage(data), 0o640); err != nil {
				t.Fatal(err)
			}
			l := mustOpen(t, dir, opts) // only the last segment is checked at open
			err = l.Replay(1, func(uint64, *core.Record) error { return nil })
			if !errors.Is(err, ErrCorrupt) || !containsAll(err.Error(), path, tc.want) {
				t.Fatalf("got %v, want ErrCorrupt naming %s and %q", err, path, tc.want)
			}
			// Replaying from a later segment does not read the damaged one.
			if err := l.Replay(l.LastSeq(), func(uint64, *core.Record) error { return nil }); err != nil {
				t.Fatalf("replay of the last record: %v", err)
			}
			mustClose(t, l)
		})
	}
}

func TestRepairInterruptedTruncation(t *testing.T) {
	// Tidwall's TruncateFront writes NAME.START, removes the older files and
	// renames it; a crash in between leaves both, and its Open finishes the
	// job. Repair must scan the file tidwall will take as its last segment.
	template := t.TempDir()
	opts, segs, lastSeq := createSegmentedLog(t, template)
	var idx []uint64
	for _, s := range segs {
		idx = append(idx, s.index)
	}
	// The kept part of the second segment, from its second record on.
	secondEnds := entryEnds(t, filepath.Join(template, segs[1].name))
	second, _ := os.ReadFile(filepath.Join(template, segs[1].name))
	startName := segmentName(idx[1]+1) + ".START"

	tests := []struct {
		name      string
		lastIsTmp bool // the START file is the last segment
	}{
		{"torn tail in a later segment", false},
		{"torn tail in the START file", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, template)
			start := second[secondEnds[0]:]
			var wantLast uint64
			if tc.lastIsTmp {
				// Segments after the second are gone: it is the last.
				for _, s := range segs[2:] {
					if err := os.Remove(filepath.Join(dir, s.name)); err != nil {
						t.Fatal(err)
					}
				}
				start = start[:len(start)-2]
				wantLast = idx[2] - 2
			} else {
				path := filepath.Join(dir, segs[len(segs)-1].name)
				data, _ := os.ReadFile(path)
				if err := os.WriteFile(path, data[:len(data)-2], 0o640); err != nil {
					t.Fatal(err)
				}
				wantLast = lastSeq - 1
			}
			if err := os.WriteFile(filepath.Join(dir, startName), start, 0o640); err != nil {
				t.Fatal(err)
			}
			l := mustOpen(t, dir, opts)
			checkReplay(t, l, idx[1]+1, wantLast)
			if st := l.Stats(); st.TornTailRepairs != 1 {
				t.Fatalf("stats %+v", st)
			}
			mustClose(t, l)
			if names := segmentNames(t, dir); names[0] != segmentName(idx[1]+1) {
				t.Fatalf("segments after open: %v", names)
			}
		})
	}
}

func TestRepairFileSystemFailures(t *testing.T) {
	template := t.TempDir()
	createLog(t, template, 5, testOptions())
	seg := segmentNames(t, template)[0]
	for _, op := range []vfs.OpKind{vfs.OpReadDir, vfs.OpReadFile, vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpOpen, vfs.OpTruncate} {
		t.Run(op.String(), func(t *testing.T) {
			dir := copyDir(t, template)
			path := filepath.Join(dir, seg)
			data, _ := os.ReadFile(path)
			torn := data[:len(data)-3]
			if err := os.WriteFile(path, torn, 0o640); err != nil {
				t.Fatal(err)
			}
			opts := testOptions()
			opts.FS = vfs.NewErrorFS(vfs.Default(), vfs.FailFrom(vfs.And(vfs.Kinds(op), vfs.Under(dir)), 1))
			l, err := Open(dir, opts)
			if !errors.Is(err, vfs.ErrInjected) {
				if err == nil {
					_ = l.Close()
				}
				t.Fatalf("open: %v, want the injected error", err)
			}
			// Whatever failed, a later open repairs the log.
			l = mustOpen(t, dir, testOptions())
			checkReplay(t, l, 1, 4)
			mustClose(t, l)
		})
	}
}

// createSegmentedLog writes a log of several segments of several records
// each, whose last segment holds at least two records, and returns the
// options it used, its segments and its last seq.
func createSegmentedLog(t *testing.T, dir string) (Options, []segmentFile, uint64) {
	t.Helper()
	opts := testOptions()
	// Room for at least 3 of the generated records, which grow as the
	// format gains fields (about 2.7 KB each in format 3).
	opts.SegmentSizeBytes = 16 << 10
	l := mustOpen(t, dir, opts)
	l.Start()
	writeRecords(t, l, 40)
	for {
		segs, err := listSegments(vfs.Default(), dir)
		if err != nil {
			t.Fatal(err)
		}
		last := segs[len(segs)-1]
		if l.LastSeq() >= last.index+1 {
			mustClose(t, l)
			if len(segs) < 4 || len(entryEnds(t, filepath.Join(dir, segs[1].name))) < 3 {
				t.Fatalf("segments %v: want at least 4, the second with 3 records", segs)
			}
			return opts, segs, l.LastSeq()
		}
		writeRecords(t, l, 1)
	}
}

func TestReplayStopsAtFirstError(t *testing.T) {
	// Enough records for many decoding chunks, in several segments.
	opts := testOptions()
	opts.SegmentSizeBytes = 256 << 10
	template := t.TempDir()
	createLog(t, template, 1500, opts)
	segs, err := listSegments(vfs.Default(), template)
	if err != nil || len(segs) < 4 {
		t.Fatalf("segments %v, %v: want at least 4", segs, err)
	}
	second := segs[1]
	secondEnds := entryEnds(t, filepath.Join(template, second.name))
	badSeq := second.index + 5

	stop := errors.New("stop")
	tests := []struct {
		name     string
		damage   func(data []byte) []byte // of the second segment
		failAt   uint64                   // fn fails here (0: never)
		wantLast uint64                   // last seq fn is called with
		wantErr  error
	}{
		{"fn error", nil, 700, 700, stop},
		{"bad record", func(b []byte) []byte { b[secondEnds[4]+40] ^= 1; return b }, 0, badSeq - 1, ErrCorrupt},
		{"missing last record", func(b []byte) []byte { return b[:secondEnds[len(secondEnds)-2]] }, 0, segs[2].index - 2, ErrCorrupt},
		{"fn error before a bad record", func(b []byte) []byte { b[secondEnds[4]+40] ^= 1; return b }, badSeq - 2, badSeq - 2, stop},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, template)
			if tc.damage != nil {
				path := filepath.Join(dir, second.name)
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, tc.damage(data), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			l := mustOpen(t, dir, opts)
			defer mustClose(t, l)
			var last uint64
			err := l.Replay(1, func(seq uint64, rec *core.Record) error {
				if seq != last+1 {
					t.Fatalf("fn called with seq %d after %d", seq, last)
				}
				last = seq
				if seq == tc.failAt {
					return stop
				}
				return nil
			})
			if !errors.Is(err, tc.wantErr) || last != tc.wantLast {
				t.Fatalf("replay: last seq %d, err %v; want %d, %v", last, err, tc.wantLast, tc.wantErr)
			}
		})
	}
}

func TestRepairRefusesWholeFrames(t *testing.T) {
	// A frame written whole is never a torn write, even at the tail: repair
	// refuses rather than cut it.
	template := t.TempDir()
	createLog(t, template, 5, testOptions())
	seg := segmentNames(t, template)[0]
	entry := func(frame []byte) []byte { return append(appendUvarintTest(nil, uint64(len(frame))), frame...) }
	future := record.AppendFramed(nil, 6, recordFor(6))
	future[2] = record.FormatVersion + 1
	end := len(future) - record.FrameTrailerBytes
	binary.LittleEndian.PutUint32(future[end:], crc32.Checksum(future[:end], crc32.MakeTable(crc32.Castagnoli)))

	tests := []struct {
		name   string
		append []byte
		want   string
	}{
		{"misplaced frame", entry(record.AppendFramed(nil, 9, recordFor(9))), "seq 9 read at 6"},
		{"frame of a later version", entry(future), fmt.Sprintf("unknown version %d", record.FormatVersion+1)},
		{"later version after garbage", append([]byte{0x05, 1, 2, 3, 4, 5}, entry(future)...), "followed by a whole frame"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, template)
			path := filepath.Join(dir, seg)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data = append(data, tc.append...)
			if err := os.WriteFile(path, data, 0o640); err != nil {
				t.Fatal(err)
			}
			l, err := Open(dir, testOptions())
			if err == nil {
				_ = l.Close()
				t.Fatal("open succeeded")
			}
			if !errors.Is(err, ErrCorrupt) || !containsAll(err.Error(), path, tc.want) {
				t.Fatalf("got %v, want ErrCorrupt naming %s and %q", err, path, tc.want)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
				t.Fatal("refused open changed the segment")
			}
		})
	}
}
