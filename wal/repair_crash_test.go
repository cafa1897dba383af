package wal

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"marketd/internal/vfs"
)

// TestCrashAtEveryOperationOfARepair runs the repair of a torn tail on a
// CrashFS and crashes it at each of its mutating operations in turn (the
// copy aside: create, write, sync; the truncation: truncate, sync; the
// directory's sync), keeping only what was synced. Whatever the crash
// kept, the segment is either untouched or cut exactly at the last whole
// frame, never cut elsewhere, and a second repair on the crashed file
// system ends with the segment cut there.
func TestCrashAtEveryOperationOfARepair(t *testing.T) {
	real := t.TempDir()
	createLog(t, real, 6, testOptions())
	name := segmentNames(t, real)[0]
	whole, err := os.ReadFile(filepath.Join(real, name))
	if err != nil {
		t.Fatal(err)
	}
	ends := entryEnds(t, filepath.Join(real, name))
	good := ends[len(ends)-2] // the last record is torn below
	torn := whole[:len(whole)-3]

	const dir = "/wal"
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	kinds := map[vfs.OpKind]bool{}
	for k := 1; ; k++ {
		mem := vfs.NewCrashFS()
		if err := mem.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileSync(mem, filepath.Join(dir, name), torn, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := vfs.SyncDir(mem, dir); err != nil {
			t.Fatal(err)
		}
		efs := vfs.NewErrorFS(mem, vfs.FailFrom(vfs.Mutating, k))
		_, repErr := repair(efs, dir, quiet)
		var crashedAt vfs.Op
		if m := mutatingOps(efs.Ops()); len(m) >= k {
			crashedAt = m[k-1]
			kinds[crashedAt.Kind] = true
		}
		after := mem.Crash()
		seg, err := after.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("crash at %d (%v): the segment is gone: %v", k, crashedAt, err)
		}
		if !bytes.Equal(seg, torn) && !bytes.Equal(seg, whole[:good]) {
			t.Fatalf("crash at %d (%v): segment of %d bytes, want %d (untouched) or %d (cut)", k, crashedAt, len(seg), len(torn), good)
		}
		if _, err := repair(after, dir, quiet); err != nil {
			t.Fatalf("crash at %d (%v): second repair: %v", k, crashedAt, err)
		}
		seg, _ = after.ReadFile(filepath.Join(dir, name))
		if !bytes.Equal(seg, whole[:good]) {
			t.Fatalf("crash at %d (%v): after the second repair the segment has %d bytes, want %d", k, crashedAt, len(seg), good)
		}
		if repErr == nil {
			t.Logf("%d crash points", k)
			break
		}
	}
	for _, want := range []vfs.OpKind{vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpTruncate} {
		if !kinds[want] {
			t.Errorf("no crash at a %v operation (crashed at %v)", want, fmt.Sprint(kinds))
		}
	}
}

func mutatingOps(ops []vfs.Op) []vfs.Op {
	var out []vfs.Op
	for _, o := range ops {
		if o.Kind.Mutates() {
			out = append(out, o)
		}
	}
	return out
}
