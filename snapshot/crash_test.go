package snapshot_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"marketd/core"
	"marketd/internal/manualclock"
	"marketd/internal/vfs"
	"marketd/snapshot"
	"marketd/wal"
)

// crashSnapDir is the snapshot directory inside the in-memory file system.
const crashSnapDir = "/data/snapshots"

// truncHook routes the log's truncation through the ErrorFS's count, so
// that a crash can fall before it (nothing truncated) or after it: tidwall
// truncates its own files, out of the FS's reach; its crash points are
// covered by the strace tests of cmd/marketd.
type truncHook struct {
	*wal.Log
	efs *vfs.ErrorFS
}

func (h truncHook) TruncateFront(ctx context.Context, seq uint64) error {
	if err := h.efs.Inject(vfs.Op{Kind: vfs.OpExternal, Path: "wal: truncate front"}); err != nil {
		return err
	}
	return h.Log.TruncateFront(ctx, seq)
}

// crashNode is an engine on a real log in walDir and snapshots in fsys.
type crashNode struct {
	log   *wal.Log
	e     *core.Engine
	snaps *snapshot.Manager
}

func startCrashNode(t *testing.T, walPath string, fsys vfs.FS, efs *vfs.ErrorFS, c *manualclock.Clock) *crashNode {
	t.Helper()
	log, err := wal.Open(walPath, wal.Options{NoFsync: true, SegmentSizeBytes: 1 << 20, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	st, rec, err := snapshot.Recover(fsys, crashSnapDir, log, quiet)
	if err != nil {
		t.Fatalf("recover: %v", err)
	}
	log.Start()
	n := &crashNode{log: log}
	n.e = core.NewEngine(st, log, core.Config{Now: c.Now, CloseInterval: -1})
	var sl snapshot.Log = log
	if efs != nil {
		sl = truncHook{Log: log, efs: efs}
	}
	// A paced snapshot's accounts are written on a thread of their own,
	// as Run's are by default.
	n.snaps = snapshot.NewManager(st, sl, snapshot.Options{Dir: crashSnapDir, FS: fsys, Now: c.Now, ChunkObjects: 3,
		ThreadNice: snapshot.DefaultThreadNice, Logger: quiet}, rec.Snapshot)
	return n
}

func (n *crashNode) stop(t *testing.T) {
	t.Helper()
	n.e.Close()
	if err := n.log.Close(); err != nil {
		t.Fatalf("close log: %v", err)
	}
}

// TestCrashAtEveryOperationOfASnapshot takes a snapshot (with two older
// ones in place, so that it also trims the log and deletes the oldest) and
// crashes it at each of its mutating file operations in turn: the file's
// creation, writes, fsyncs, close, rename, the directory's fsync, the
// log's truncation and the removal; taken as trading goes on, it is
// written over a spare longer than itself (its renames and its cut) and
// keeps the oldest as the next spare. After each crash, with only what was
// synced kept, recovery must find the previous or the new snapshot and the
// log that completes it, and the recovered state must equal the one
// acknowledged before the snapshot.
func TestCrashAtEveryOperationOfASnapshot(t *testing.T) {
	t.Run("at shutdown", func(t *testing.T) { crashAtEveryOperation(t, false) })
	t.Run("while trading", func(t *testing.T) { crashAtEveryOperation(t, true) })
}

// crashAtEveryOperation is TestCrashAtEveryOperationOfASnapshot with the
// snapshot taken as Take takes it, or as Run does while trading goes on
// (paced): then the oldest snapshot is kept as a spare, and the crashed
// snapshot is written over the spare that the snapshot before it kept.
func crashAtEveryOperation(t *testing.T, paced bool) {
	take := func(n *crashNode) (snapshot.Header, error) {
		if paced {
			return n.snaps.TakePaced(t.Context(), 1)
		}
		return n.snaps.Take(t.Context())
	}
	rounds := 3 // two snapshots before the crashed one
	if paced {
		rounds = 4 // three: the third keeps the first as the spare
	}
	const seed = 7
	t.Logf("seed %d", seed)
	base := t.TempDir()
	c := newClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	mem := vfs.NewCrashFS()
	n := startCrashNode(t, base, mem, nil, c)
	w := newWorkload(t, &node{t: t, e: n.e, clock: c}, seed)
	for round := range rounds {
		for range 40 {
			w.step()
		}
		if round < rounds-1 {
			if _, err := take(n); err != nil {
				t.Fatalf("snapshot %d: %v", round+1, err)
			}
		}
	}
	prev, _ := n.snaps.Last()
	want := n.e.State().Canonical()
	n.stop(t)
	if paced {
		// The spare's rename reached the disk, as the kernel's writeback
		// of the directory makes it do, so that the crashed snapshot,
		// after the restart (which keeps the spare), writes over it.
		if err := vfs.SyncDir(mem, crashSnapDir); err != nil {
			t.Fatal(err)
		}
		// Longer than the snapshot written over it, so that its cut
		// shortens it: a crash must never leave the new snapshot with
		// the spare's bytes after its end.
		f, err := mem.OpenReadWrite(crashSnapDir + "/snapshot-spare.tmp")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, 64<<10)); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(f.Sync(), f.Close()); err != nil {
			t.Fatal(err)
		}
	}

	var kinds = map[vfs.OpKind]bool{}
	fromPrev, fromNew := 0, 0
	for k := 1; ; k++ {
		work := t.TempDir()
		if err := os.CopyFS(work, os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
		disk := mem.Crash() // everything there was synced: an exact copy
		efs := vfs.NewErrorFS(disk, nil)
		n := startCrashNode(t, work, efs, efs, c)
		before := len(efs.Ops())
		efs.SetInjector(vfs.FailFrom(vfs.Mutating, k))
		_, takeErr := take(n)
		n.stop(t)
		ops := efs.Ops()[before:]
		var crashedAt vfs.Op
		if m := mutations(ops); len(m) >= k {
			crashedAt = m[k-1]
			kinds[crashedAt.Kind] = true
		}

		after := disk.Crash()
		log, err := wal.Open(work, wal.Options{NoFsync: true, SegmentSizeBytes: 1 << 20, Logger: quiet})
		if err != nil {
			t.Fatalf("crash at %d (%v): open log: %v", k, crashedAt, err)
		}
		st, rec, err := snapshot.Recover(after, crashSnapDir, log, quiet)
		if err != nil {
			t.Fatalf("crash at %d (%v): recover: %v", k, crashedAt, err)
		}
		requireState(t, fmt.Sprintf("crash at operation %d (%v)", k, crashedAt), st.Canonical(), want)
		if ents, err := after.ReadDir(crashSnapDir); err == nil {
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".tmp") && e.Name() != "snapshot-spare.tmp" {
					t.Errorf("crash at %d (%v): recovery left %s", k, crashedAt, e.Name())
				}
			}
		}
		if err := log.Close(); err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.Snapshot == nil:
			t.Fatalf("crash at %d (%v): recovery used no snapshot", k, crashedAt)
		case rec.Snapshot.From == prev.From:
			fromPrev++
		default:
			fromNew++
		}
		if takeErr == nil {
			if rec.Snapshot.From == prev.From {
				t.Errorf("the snapshot completed, and recovery used the one before it")
			}
			t.Logf("%d crash points (%v): %d recovered from the previous snapshot, %d from the new one", k, kinds, fromPrev, fromNew)
			break
		}
	}
	// At shutdown: the new file's creation, the log's truncation
	// (OpExternal) and the oldest snapshot's removal. While trading: the
	// spare renamed and cut (OpTruncate) instead of a file created, no
	// truncation of this one-segment log (the trim cuts at a segment's
	// end), and the oldest snapshot renamed to the spare.
	wantKinds := []vfs.OpKind{vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpRename, vfs.OpExternal, vfs.OpRemove}
	if paced {
		wantKinds = []vfs.OpKind{vfs.OpWrite, vfs.OpSync, vfs.OpRename, vfs.OpTruncate}
	}
	for _, want := range wantKinds {
		if !kinds[want] {
			t.Errorf("no crash at a %v operation", want)
		}
	}
	if fromPrev == 0 || fromNew == 0 {
		t.Errorf("recovered %d times from the previous snapshot and %d from the new: want both", fromPrev, fromNew)
	}
}

func mutations(ops []vfs.Op) []vfs.Op {
	var out []vfs.Op
	for _, o := range ops {
		if o.Kind.Mutates() {
			out = append(out, o)
		}
	}
	return out
}
