package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"marketd/core"
	"marketd/core/money"
	"marketd/wal"
)

// runChecker runs `marketd check` with args and returns its exit status and
// output.
func runChecker(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"check"}, args...)...)
	cmd.Env = cleanEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("run checker: %v", err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// treeDigest is a digest of every file's name, mode, size, time and content
// under dir: the checker must leave it unchanged.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d %d\n", path, info.Mode(), info.Size(), info.ModTime().UnixNano())
		if !d.IsDir() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// crashedDataDir runs the restart scenario on a server, kills it and
// returns its data directory.
func crashedDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := startProc(t, "server", procOptions{dataDir: dir, args: []string{"-snapshot-every-records", "20", "-snapshot-every", "1s"}})
	runScenario(t, p.client(nil))
	p.kill()
	return dir
}

// lastSegmentOf returns the newest segment file of a data directory.
func lastSegmentOf(t *testing.T, dataDir string) string {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(dataDir, "wal", strings.Repeat("[0-9]", 20)))
	if len(segs) == 0 {
		t.Fatalf("no segment in %s", dataDir)
	}
	return segs[len(segs)-1]
}

// TestCheckDataDirectory runs the checker on a crashed server's directory,
// whole and damaged in turn: it must report, change nothing, and exit 0
// only when every invariant holds.
func TestCheckDataDirectory(t *testing.T) {
	base := crashedDataDir(t)
	for _, tc := range []struct {
		name     string
		damage   func(t *testing.T, dir string)
		wantCode int
		want     []string
	}{
		{"as left by kill -9", nil, checkOK, []string{"result: OK", "log: no torn tail", "invariant ok: conservation"}},
		{"torn tail", func(t *testing.T, dir string) {
			appendTo(t, lastSegmentOf(t, dir), []byte{0x40, 'M', 'K'}) // a length promising 64 bytes, 2 present
		}, checkOK, []string{"log: torn tail in", "not cut here", "result: OK"}},
		{"corrupt record before the end", func(t *testing.T, dir string) {
			seg := lastSegmentOf(t, dir)
			b, err := os.ReadFile(seg)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/3] ^= 0x55
			if err := os.WriteFile(seg, b, 0o640); err != nil {
				t.Fatal(err)
			}
		}, checkFailed, []string{"FAILED", "corrupt"}},
		{"no such directory", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}, checkIOError, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
				t.Fatal(err)
			}
			if tc.damage != nil {
				tc.damage(t, dir)
			}
			var before string
			if _, err := os.Stat(dir); err == nil {
				before = treeDigest(t, dir)
			}
			code, out := runChecker(t, "-data", dir)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\n%s", code, tc.wantCode, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if before != "" && treeDigest(t, dir) != before {
				t.Fatalf("the checker changed the directory")
			}
		})
	}
}

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckFindsViolation writes a log whose record replays but mints KP
// without counting it in the supply: the checker must name the broken
// invariant and exit 1.
func TestCheckFindsViolation(t *testing.T) {
	dir := t.TempDir()
	log, err := wal.Open(filepath.Join(dir, "wal"), wal.Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	log.Start()
	seq, err := log.Next()
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.New()
	rec := &core.Record{Kind: core.KindAccountCreated, Time: 1, Accounts: []core.AccountChange{{
		ID:       id,
		Info:     &core.AccountInfo{Name: "minted", Role: core.RoleSpeculator, PasswordHash: []byte("h"), CreatedAt: 1, ReferralCode: "ABCDEFGH"},
		Balances: []core.Balance{{Currency: money.KP, After: money.Units(5)}},
		Ledger:   []core.LedgerEntry{{Seq: seq, Currency: money.KP, Type: core.TxSignupBonus, Amount: money.Units(5), BalanceAfter: money.Units(5), Ref: id, Time: 1}},
	}}}
	done := make(chan error, 1)
	log.Append(seq, rec, done)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	code, out := runChecker(t, "-data", dir)
	if code != checkFailed || !strings.Contains(out, "invariant FAILED (1 violations): conservation") {
		t.Fatalf("exit %d, want %d and the conservation invariant failed:\n%s", code, checkFailed, out)
	}
}

// TestDumpRecords prints a range of records.
func TestDumpRecords(t *testing.T) {
	dir := crashedDataDir(t)
	code, out := runChecker(t, "-data", dir, "-dump-from", "1", "-dump-to", "3")
	if code != checkOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, w := range []string{"seq 1 account_created", "seq 3 market_created", "ledger market_subsidy"} {
		if !strings.Contains(out, w) {
			t.Errorf("dump lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "seq 4 ") {
		t.Errorf("dump went past -dump-to 3:\n%s", out)
	}
	if code, out := runChecker(t, "-data", dir, "-dump-from", "5", "-dump-to", "2"); code != checkUsage {
		t.Errorf("a reversed range: exit %d, want %d\n%s", code, checkUsage, out)
	}
}

// TestDataDirectoryLocked: while a server runs, a second server and the
// checker are refused with a clear error; once it stopped, both work.
func TestDataDirectoryLocked(t *testing.T) {
	dir := t.TempDir()
	p := startProc(t, "first", procOptions{dataDir: dir})
	second := exec.Command(binPath, "-addr", "127.0.0.1:0", "-data", dir, "-admin-password", testAdminPassword, "-password-cost", testPasswordCost)
	second.Env = cleanEnv()
	out, err := second.CombinedOutput()
	if err == nil || second.ProcessState.ExitCode() == 0 || !strings.Contains(string(out), "data directory in use") {
		t.Fatalf("second server on the same directory: %v\n%s", err, out)
	}
	if code, out := runChecker(t, "-data", dir); code != checkInUse || !strings.Contains(out, "in use by a running server") {
		t.Fatalf("checker while the server runs: exit %d, want %d\n%s", code, checkInUse, out)
	}
	if code := p.terminate(); code != 0 {
		t.Fatalf("server exit %d", code)
	}
	if code, out := runChecker(t, "-data", dir); code != checkOK {
		t.Fatalf("checker after the stop: exit %d\n%s", code, out)
	}
	p2 := startProc(t, "after", procOptions{dataDir: dir})
	p2.kill()
}
