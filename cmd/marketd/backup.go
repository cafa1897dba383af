package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"marketd/internal/vfs"
	"marketd/snapshot"
	"marketd/transport"
	"marketd/wal"
)

// backup writes an online backup named name under -backup-dir: a snapshot
// and the log after it, a data directory that `marketd check` and a
// server can open (snapshot.Manager.Backup).
func (n *node) backup(ctx context.Context, cfg config, name string) (transport.BackupResult, error) {
	if err := os.MkdirAll(cfg.backupDir, 0o750); err != nil {
		return transport.BackupResult{}, fmt.Errorf("backup: %w", err)
	}
	if err := vfs.SyncDir(vfs.Default(), filepath.Dir(filepath.Clean(cfg.backupDir))); err != nil {
		return transport.BackupResult{}, fmt.Errorf("backup: %w", err)
	}
	// One backup at a time, so that two cannot both find room for the
	// last one.
	n.backupMu.Lock()
	defer n.backupMu.Unlock()
	if err := roomForBackup(cfg.backupDir); err != nil {
		return transport.BackupResult{}, err
	}
	dst := filepath.Join(cfg.backupDir, name)
	var copied wal.CopyResult
	res, err := n.snaps.Backup(ctx, dst, func(walDir string, from uint64) error {
		var err error
		copied, err = wal.CopyLog(nil, filepath.Join(cfg.dataDir, "wal"), walDir, from)
		return err
	})
	if errors.Is(err, snapshot.ErrBackupExists) {
		return transport.BackupResult{}, fmt.Errorf("%w: %w", transport.ErrBackupExists, err)
	}
	if err != nil {
		// A half-written backup must not be taken for one: it is a data
		// directory that a server would start on.
		if rerr := os.RemoveAll(dst); rerr != nil {
			err = errors.Join(err, fmt.Errorf("backup: remove the incomplete %s: %w", dst, rerr))
		}
		return transport.BackupResult{}, err
	}
	abs, err := filepath.Abs(dst)
	if err != nil {
		abs = dst
	}
	return transport.BackupResult{Dir: abs, SnapshotFrom: res.Snapshot.From, SnapshotThrough: res.Snapshot.Through,
		LogFirstSeq: copied.FirstSeq, LogLastSeq: copied.LastSeq, Bytes: res.Bytes + copied.Bytes, Took: res.Took}, nil
}

// roomForBackup refuses a backup when dir holds transport.MaxBackups
// entries already (docs/API.md, "POST /api/admin/backup"): each backup is
// a whole data directory, and backups without bound would fill the disk
// and stop the log. The operator removes old ones.
func roomForBackup(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if len(entries) >= transport.MaxBackups {
		return fmt.Errorf("%w: %s holds %d entries, at most %d", transport.ErrBackupLimit, dir, len(entries), transport.MaxBackups)
	}
	return nil
}
