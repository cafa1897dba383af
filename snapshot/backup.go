package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"marketd/internal/vfs"
)

// ErrBackupExists reports a backup directory that exists already: a backup
// never overwrites anything.
var ErrBackupExists = errors.New("snapshot: backup directory exists")

// BackupResult says what Backup wrote.
type BackupResult struct {
	Dir      string
	Snapshot Header
	Bytes    int64 // of the snapshot
	Took     time.Duration
}

// Backup writes a consistent copy of the running state into dst, a data
// directory a server or the offline checker can open: dst/snapshots holds
// a new snapshot, written as Take writes one (the log awaited through its
// highest LSN, fsynced, renamed), and copyLog writes into dst/wal the log
// from the snapshot's From+1 on (wal.CopyLog). Trading goes on meanwhile;
// the copy holds the state as of the snapshot plus whatever of the log
// was written by the time it was copied. Backup holds the lock that Take
// holds, so that no snapshot trims the log or deletes files while it is
// copied. dst must not exist (ErrBackupExists); its parent must.
func (m *Manager) Backup(ctx context.Context, dst string, copyLog func(walDir string, from uint64) error) (BackupResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fsys := m.opts.FS
	if _, err := fsys.ReadDir(dst); err == nil {
		return BackupResult{}, fmt.Errorf("%w: %s", ErrBackupExists, dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return BackupResult{}, fmt.Errorf("snapshot: backup: %w", err)
	}
	start := m.opts.Now()
	snapDir := filepath.Join(dst, "snapshots")
	if err := fsys.MkdirAll(snapDir, 0o750); err != nil {
		return BackupResult{}, fmt.Errorf("snapshot: backup: %w", err)
	}
	h, size, err := write(ctx, fsys, snapDir, m.st, m.log, m.log.Durable(), start, m.opts.ChunkObjects, nil, "")
	if err != nil {
		return BackupResult{}, fmt.Errorf("snapshot: backup: %w", err)
	}
	if err := copyLog(filepath.Join(dst, "wal"), h.From+1); err != nil {
		return BackupResult{}, fmt.Errorf("snapshot: backup: %w", err)
	}
	// The new directories must be durable in their parents.
	for _, d := range []string{dst, filepath.Dir(filepath.Clean(dst))} {
		if err := vfs.SyncDir(fsys, d); err != nil {
			return BackupResult{}, fmt.Errorf("snapshot: backup: %w", err)
		}
	}
	res := BackupResult{Dir: dst, Snapshot: h, Bytes: size, Took: m.opts.Now().Sub(start)}
	m.opts.Logger.Info("backup written", "dir", dst, "from", h.From, "through", h.Through, "bytes", size, "took", res.Took)
	return res, nil
}
