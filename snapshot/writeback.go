package snapshot

import (
	"fmt"

	"marketd/internal/vfs"
)

// Pacing of a snapshot's writes (docs/PERFORMANCE.md, "Stalls of the trade
// path"). A snapshot of 1,000,000 accounts is about 150 MB. Left to the
// kernel, its dirty pages piled up and were written out together, by the
// final fsync or by the kernel's own writeback, and an fsync of the log
// issued meanwhile waited for them: with a journal, ext4 commits it for the
// log's fsync, and a commit waits for the data of every file whose blocks
// it allocates (data=ordered); without one, the log's fsync writes metadata
// blocks that the other file's writeback holds (docs/PERFORMANCE.md,
// "Writeback that is not the server's"). The trace of a snapshot of 100,000 accounts
// showed its final fsync taking 58 ms and the log's fsync 36 ms behind it.
// So the file is written back in steps as it is written: each step's
// writeback is started at once, and the step before it awaited, so that at
// most two steps are dirty or in flight when the log commits.
const (
	// writebackStepBytes is one step: a log commit waits for at most about
	// two steps of the snapshot's writes. At 1 MiB the appends to a log
	// beside a 64 MB write had a median latency of 2.55 ms and a p90 of
	// 5.5 ms (0.3-3 and 0.8-5 ms before the write), at 256 KiB 1.47 and
	// 3.35 ms, the write no slower (BenchmarkWritebackBesideLog,
	// docs/PERFORMANCE.md, "The snapshot's second").
	writebackStepBytes = 256 << 10
	// syncEveryBytes is the step where the file offers no range writeback
	// (a test's file system): an fsync every 16 MiB.
	syncEveryBytes = 16 << 20
)

// rangeSyncer starts and awaits the writeback of byte ranges of a file:
// sync_file_range(2) on Linux.
type rangeSyncer interface {
	// start starts the writeback of n bytes at off, without waiting.
	start(off, n int64) error
	// wait waits until n bytes at off are written (their writeback
	// started first if it was not).
	wait(off, n int64) error
}

// writeback paces the writeback of a file written from offset 0 on: wrote
// is told the file's size after each write.
type writeback struct {
	f       vfs.File
	rs      rangeSyncer // nil: fsync every syncEveryBytes instead
	step    int64
	started int64 // bytes from 0 whose writeback was started
	waited  int64 // bytes from 0 known written
}

func newWriteback(f vfs.File) *writeback {
	w := &writeback{f: f, rs: newRangeSyncer(f), step: writebackStepBytes}
	if w.rs == nil {
		w.step = syncEveryBytes
	}
	return w
}

// wrote starts the writeback of every whole step below size, and waits
// for all of them but the newest.
func (w *writeback) wrote(size int64) error {
	for size-w.started >= w.step {
		if w.rs == nil {
			if err := w.f.Sync(); err != nil {
				return fmt.Errorf("snapshot: fsync while writing: %w", err)
			}
			w.started, w.waited = w.started+w.step, w.started+w.step
			continue
		}
		if err := w.rs.start(w.started, w.step); err != nil {
			return fmt.Errorf("snapshot: start the writeback of %d bytes at %d: %w", w.step, w.started, err)
		}
		w.started += w.step
		if upTo := w.started - w.step; upTo > w.waited {
			if err := w.rs.wait(w.waited, upTo-w.waited); err != nil {
				return fmt.Errorf("snapshot: wait for the writeback of %d bytes at %d: %w", upTo-w.waited, w.waited, err)
			}
			w.waited = upTo
		}
	}
	return nil
}
