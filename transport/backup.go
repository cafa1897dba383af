package transport

import (
	"context"
	"errors"
	"time"

	"github.com/valyala/fasthttp"
)

// ErrBackupExists is what Config.Backup wraps for a backup name in use:
// answered 409 backup_exists.
var ErrBackupExists = errors.New("backup exists")

// ErrBackupLimit is what Config.Backup wraps when the backup directory
// holds MaxBackups entries already: answered 409 backup_limit, so that
// backups cannot fill the disk the log lives on.
var ErrBackupLimit = errors.New("backup limit reached")

// MaxBackups is the number of entries the backup directory may hold before
// a backup is refused (docs/API.md, "POST /api/admin/backup"): each backup
// is a whole data directory, and the operator removes old ones.
const MaxBackups = 32

// BackupResult is what an online backup wrote (POST /api/admin/backup).
type BackupResult struct {
	Dir             string // the backup's data directory, on the server's machine
	SnapshotFrom    uint64
	SnapshotThrough uint64
	LogFirstSeq     uint64
	LogLastSeq      uint64
	Bytes           int64 // snapshot and log together
	Took            time.Duration
}

// maxBackupNameBytes bounds a backup's name.
const maxBackupNameBytes = 64

type backupRequest struct {
	Name string `json:"name"`
}

type backupResponse struct {
	Dir             string `json:"dir"`
	SnapshotFrom    uint64 `json:"snapshot_from_seq"`
	SnapshotThrough uint64 `json:"snapshot_through_seq"`
	LogFirstSeq     uint64 `json:"log_first_seq"`
	LogLastSeq      uint64 `json:"log_last_seq"`
	Bytes           int64  `json:"bytes"`
	TookMillis      int64  `json:"took_ms"`
}

// backup writes an online backup under the server's backup directory
// (docs/API.md, "POST /api/admin/backup"); trading goes on meanwhile.
func (s *Server) backup(ctx *fasthttp.RequestCtx, _ *caller, body *backupRequest) error {
	if err := validBackupName(body.Name); err != nil {
		return err
	}
	return respond(ctx, fasthttp.StatusCreated, backupResponseOf)(s.cfg.Backup(context.Context(ctx), body.Name))
}

func backupResponseOf(r BackupResult) backupResponse {
	return backupResponse{Dir: r.Dir, SnapshotFrom: r.SnapshotFrom, SnapshotThrough: r.SnapshotThrough,
		LogFirstSeq: r.LogFirstSeq, LogLastSeq: r.LogLastSeq, Bytes: r.Bytes, TookMillis: r.Took.Milliseconds()}
}

// validBackupName accepts 1-64 characters of A-Z, a-z, 0-9, '.', '_' and
// '-', not starting with a dot: a plain directory name, never a path.
func validBackupName(name string) error {
	if name == "" || len(name) > maxBackupNameBytes || name[0] == '.' {
		return fieldError("name", "must be 1-%d characters of A-Z, a-z, 0-9, '.', '_' and '-', not starting with '.'", maxBackupNameBytes)
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return fieldError("name", "must be 1-%d characters of A-Z, a-z, 0-9, '.', '_' and '-', not starting with '.'", maxBackupNameBytes)
		}
	}
	return nil
}
