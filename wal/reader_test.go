package wal

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"marketd/core"
	"marketd/internal/vfs"
)

// TestReaderAgreesWithOpen damages the last segment in each way repair
// knows and reads the log with a Reader whose file system fails every
// operation that could write: it must see the records that Open keeps
// after its repair, report the torn tail Open cuts, and refuse what Open
// refuses.
func TestReaderAgreesWithOpen(t *testing.T) {
	template := t.TempDir()
	opts, segs, last := createSegmentedLog(t, template)
	lastName := segs[len(segs)-1].name
	ends := entryEnds(t, filepath.Join(template, lastName))
	for _, tc := range []struct {
		name string
		cut  func([]byte) []byte
		torn bool
	}{
		{"whole", func(b []byte) []byte { return b }, false},
		{"cut inside the last record", func(b []byte) []byte { return b[:len(b)-3] }, true},
		{"cut at the previous record's end", func(b []byte) []byte { return b[:ends[len(ends)-2]] }, false},
		{"zeros appended", func(b []byte) []byte { return append(b, make([]byte, 8)...) }, true},
		{"bit flip in the last record", func(b []byte) []byte { b[ends[0]+5] ^= 1; return b }, true},
		{"bit flip before the last record", func(b []byte) []byte { b[5] ^= 1; return b }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, template)
			path := filepath.Join(dir, lastName)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.cut(b), 0o640); err != nil {
				t.Fatal(err)
			}
			damaged, _ := os.ReadFile(path)
			readOnly := vfs.NewErrorFS(vfs.Default(), vfs.FailFrom(vfs.Mutating, 1))
			r, rerr := OpenReader(readOnly, dir)
			if got, _ := os.ReadFile(path); !reflect.DeepEqual(got, damaged) {
				t.Fatal("the reader changed the segment")
			}
			l, oerr := Open(copyDir(t, dir), opts)
			if (rerr == nil) != (oerr == nil) || (oerr != nil && !errors.Is(rerr, ErrCorrupt)) {
				t.Fatalf("reader: %v; open: %v", rerr, oerr)
			}
			if oerr != nil {
				return
			}
			defer mustClose(t, l)
			if r.FirstSeq() != l.FirstSeq() || r.LastSeq() != l.LastSeq() {
				t.Fatalf("reader holds %d..%d, open %d..%d", r.FirstSeq(), r.LastSeq(), l.FirstSeq(), l.LastSeq())
			}
			if _, torn := r.Torn(); torn != tc.torn {
				t.Fatalf("torn tail reported %v, want %v", torn, tc.torn)
			}
			n := r.FirstSeq()
			err = r.Replay(r.FirstSeq(), func(seq uint64, rec *core.Record) error {
				if seq != n || !reflect.DeepEqual(rec, recordFor(seq)) {
					t.Fatalf("seq %d: replayed %+v, want seq %d", seq, rec, n)
				}
				n++
				return nil
			})
			if err != nil || n != r.LastSeq()+1 || r.LastSeq() > last {
				t.Fatalf("replay: %v, ended at %d, last %d of %d", err, n-1, r.LastSeq(), last)
			}
			for _, op := range readOnly.Ops() {
				if op.Kind.Mutates() {
					t.Fatalf("the reader tried %v", op)
				}
			}
		})
	}
}

func TestReaderOfMissingDirectory(t *testing.T) {
	r, err := OpenReader(nil, filepath.Join(t.TempDir(), "none"))
	if err != nil || r.FirstSeq() != 1 || r.LastSeq() != 0 {
		t.Fatalf("missing dir: %v, %d..%d", err, r.FirstSeq(), r.LastSeq())
	}
	if err := r.Replay(1, func(uint64, *core.Record) error { return nil }); err != nil {
		t.Fatal(err)
	}
}
