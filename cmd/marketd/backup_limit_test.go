package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"marketd/transport"
)

// TestRoomForBackup holds the bound of docs/API.md ("POST
// /api/admin/backup"): a backup is refused with ErrBackupLimit (409
// backup_limit) once the backup directory holds transport.MaxBackups
// entries, and allowed below that. Before, nothing bounded the backups.
func TestRoomForBackup(t *testing.T) {
	for _, tt := range []struct {
		name    string
		entries int
		want    error
	}{
		{"empty", 0, nil},
		{"one below the bound", transport.MaxBackups - 1, nil},
		{"at the bound", transport.MaxBackups, transport.ErrBackupLimit},
		{"past the bound", transport.MaxBackups + 3, transport.ErrBackupLimit},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for i := range tt.entries {
				if err := os.Mkdir(filepath.Join(dir, fmt.Sprintf("b%d", i)), 0o750); err != nil {
					t.Fatal(err)
				}
			}
			if err := roomForBackup(dir); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("roomForBackup with %d entries: %v, want %v", tt.entries, err, tt.want)
			}
		})
	}
}
