package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// runBackupCmd runs `marketd backup` with the admin's password in its
// environment and returns its exit status and output.
func runBackupCmd(t *testing.T, password string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"backup"}, args...)...)
	cmd.Env = cleanEnv()
	if password != "" {
		cmd.Env = append(cmd.Env, backupPasswordEnv+"="+password)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("run backup: %v", err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// TestOnlineBackup takes a backup while accounts register without pause:
// the checker passes on the copy, a server started on it holds every
// account acknowledged before the backup began, and the backup's name
// cannot be used twice.
func TestOnlineBackup(t *testing.T) {
	dir, backups := t.TempDir(), t.TempDir()
	p := startProc(t, "server", procOptions{dataDir: dir, args: []string{"-backup-dir", backups, "-snapshot-every-records", "50", "-snapshot-every", "1s"}})
	c := p.client(nil)
	admin := sessionCred(c.login("admin", testAdminPassword))
	key := c.createKey(admin, "backups", []string{"admin"}, nil).Key
	if r, err := c.try(http.MethodPost, "/api/admin/backup", keyCred(key), map[string]any{"name": "by-key"}); err != nil || r.status != http.StatusForbidden {
		t.Fatalf("a backup with an admin key: %+v %v, want 403 Session required", r, err)
	}

	// Registrations go on in the background, one at a time.
	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprintf("user%d", i)
			r, err := c.try(http.MethodPost, "/api/auth/register", cred{}, map[string]any{"name": name, "password": "pw-" + name + "-123"})
			if err == nil && r.status == http.StatusCreated {
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
			}
		}
	}()
	for i := range 20 { // some history first, with a snapshot or two
		c.register(fmt.Sprintf("early%d", i))
	}
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()
	code, out := runBackupCmd(t, testAdminPassword, "-url", "http://"+p.addr, "-name", "b1")
	close(stop)
	<-done
	if code != 0 {
		t.Fatalf("backup: exit %d\n%s", code, out)
	}
	copyDir := filepath.Join(backups, "b1")
	if !strings.Contains(out, copyDir) {
		t.Errorf("backup output does not name %s:\n%s", copyDir, out)
	}
	if code, out := runChecker(t, "-data", copyDir); code != checkOK {
		t.Fatalf("checker on the backup: exit %d\n%s", code, out)
	}
	if code, out := runBackupCmd(t, testAdminPassword, "-url", "http://"+p.addr, "-name", "b1"); code != 1 || !strings.Contains(out, "backup_exists") {
		t.Errorf("a second backup named b1: exit %d, want 1 and backup_exists\n%s", code, out)
	}
	if code, out := runBackupCmd(t, "", "-url", "http://"+p.addr, "-name", "b2"); code != 2 || !strings.Contains(out, backupPasswordEnv) {
		t.Errorf("backup without a password: exit %d, want 2\n%s", code, out)
	}
	p.kill()

	q := startProc(t, "from backup", procOptions{dataDir: copyDir})
	qc := q.client(nil)
	for _, name := range before {
		qc.login(name, "")
	}
	for i := range 20 {
		qc.login(fmt.Sprintf("early%d", i), "")
	}
	t.Logf("%d registrations acknowledged before the backup, %d in all while it ran", len(before), len(acked))
}
