package wal

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCopyLogCutsAWriteInProgress copies a log whose last segment ends in
// a partial frame, as it does while a write is under way: the copy holds
// every whole record, opens without a repair, and replays them.
func TestCopyLogCutsAWriteInProgress(t *testing.T) {
	src := t.TempDir()
	opts, segs, last := createSegmentedLog(t, src)
	lastPath := filepath.Join(src, segs[len(segs)-1].name)
	f, err := os.OpenFile(lastPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0x50, 1, 2, 3}); err != nil { // a length promising 80 bytes, 3 written
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		from      uint64
		wantFirst uint64
	}{
		{"from the first", 1, 1},
		{"from the second segment", segs[1].index + 1, segs[1].index},
		{"past the end", last + 1, segs[len(segs)-1].index},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "wal")
			res, err := CopyLog(nil, src, dst, tc.from)
			if err != nil {
				t.Fatal(err)
			}
			if res.FirstSeq != tc.wantFirst || res.LastSeq != last {
				t.Fatalf("copied %d..%d, want %d..%d", res.FirstSeq, res.LastSeq, tc.wantFirst, last)
			}
			l := mustOpen(t, dst, opts)
			checkReplay(t, l, tc.wantFirst, last)
			mustClose(t, l)
			if broken, _ := filepath.Glob(filepath.Join(dst, "*.broken")); len(broken) != 0 {
				t.Fatalf("the copy needed a repair: %v", broken)
			}
		})
	}
}
