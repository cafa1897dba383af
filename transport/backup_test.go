package transport

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// TestBackupRoute walks the backup endpoint's answers: a valid name reaches
// Config.Backup and is answered 201 with its result; a bad name is 400
// naming the field; a name in use is 409 backup_exists; a full backup
// directory is 409 backup_limit; a non-admin is 403, and so is an admin
// key (session_required): a leaked key must not fill the disk.
func TestBackupRoute(t *testing.T) {
	var got []string
	ts := newTestServer(t, Config{Backup: func(_ context.Context, name string) (BackupResult, error) {
		switch name {
		case "taken":
			return BackupResult{}, fmt.Errorf("wrapped: %w", ErrBackupExists)
		case "one-too-many":
			return BackupResult{}, fmt.Errorf("wrapped: %w", ErrBackupLimit)
		}
		got = append(got, name)
		return BackupResult{Dir: "/b/" + name, SnapshotFrom: 7, SnapshotThrough: 9, LogFirstSeq: 1, LogLastSeq: 12, Bytes: 100}, nil
	}})
	admin := ts.admin()
	user := ts.register("backupuser")
	adminKey := ts.newKey(admin, "admin")
	for _, tc := range []struct {
		name   string
		as     auth
		body   string
		status int
		code   string
	}{
		{"valid", auth{session: admin}, `{"name":"nightly-1.a_b"}`, http.StatusCreated, ""},
		{"empty", auth{session: admin}, `{"name":""}`, http.StatusBadRequest, "invalid_field"},
		{"a path", auth{session: admin}, `{"name":"../etc"}`, http.StatusBadRequest, "invalid_field"},
		{"a slash", auth{session: admin}, `{"name":"a/b"}`, http.StatusBadRequest, "invalid_field"},
		{"hidden", auth{session: admin}, `{"name":".x"}`, http.StatusBadRequest, "invalid_field"},
		{"too long", auth{session: admin}, fmt.Sprintf(`{"name":"%065d"}`, 0), http.StatusBadRequest, "invalid_field"},
		{"in use", auth{session: admin}, `{"name":"taken"}`, http.StatusConflict, "backup_exists"},
		{"full", auth{session: admin}, `{"name":"one-too-many"}`, http.StatusConflict, "backup_limit"},
		{"not an admin", auth{session: user}, `{"name":"x"}`, http.StatusForbidden, "admin_required"},
		{"an admin key", auth{key: adminKey}, `{"name":"by-key"}`, http.StatusForbidden, "session_required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do(http.MethodPost, "/api/admin/backup", tc.as, tc.body)
			body := r.json(t)
			if r.status != tc.status || (tc.code != "" && body["code"] != tc.code) {
				t.Fatalf("%s: %d %v, want %d %s", tc.body, r.status, body, tc.status, tc.code)
			}
			if tc.status == http.StatusCreated && (body["dir"] != "/b/nightly-1.a_b" || body["log_last_seq"] != 12.0) {
				t.Fatalf("answer %v", body)
			}
		})
	}
	if len(got) != 1 || got[0] != "nightly-1.a_b" {
		t.Fatalf("backups asked for: %v, want only the valid one", got)
	}
}
