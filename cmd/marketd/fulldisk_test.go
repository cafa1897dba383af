package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The full-disk tests run the real server on a small tmpfs or a
// loop-mounted ext4 image, mounted for the test (root needed), and fill it
// for real: no file system is faked.

// mountTmpfs mounts a tmpfs of sizeBytes on a new directory and unmounts
// it when the test ends (after the test's processes are killed: cleanups
// run last-registered first). It skips the test, with one message, where
// mount is refused.
func mountTmpfs(t *testing.T, sizeBytes int) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", sizeBytes), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("SKIP: the full-disk tests did not run: mounting a tmpfs was refused (they need root): %v: %s",
			err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// mountExt4 makes an ext4 file system of sizeBytes in an image file, with
// no blocks reserved for root (the tests run as root, who could write into
// them past what statfs calls available), loop-mounts it on a new directory
// and unmounts it when the test ends. It skips the test, with one message,
// where mkfs.ext4 is missing or mount is refused.
func mountExt4(t *testing.T, sizeBytes int) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.Truncate(int64(sizeBytes)), f.Close()); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-m", "0", img).CombinedOutput(); err != nil {
		t.Skipf("SKIP: the ext4 full-disk test did not run: mkfs.ext4: %v: %s", err, strings.TrimSpace(string(out)))
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Skipf("SKIP: the full-disk tests did not run: mounting a loop device was refused (they need root): %v: %s",
			err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// freeBytes returns the bytes available on dir's file system.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// fill writes a file of zeros that leaves about leaveBytes free on dir's
// file system, and returns its path.
func fill(t *testing.T, dir string, leaveBytes int64) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	size := freeBytes(t, dir) - leaveBytes
	if size <= 0 {
		t.Fatalf("only %d bytes free, want more than %d", freeBytes(t, dir), leaveBytes)
	}
	if err := os.WriteFile(path, make([]byte, size), 0o640); err != nil {
		t.Fatalf("filler of %d bytes: %v", size, err)
	}
	return path
}

// TestDiskFull fills the data directory's disk while the server registers
// accounts and trades, on a tmpfs and on a loop-mounted ext4: the log write
// or fsync that fails is fail-stop (the waiting operation answered 503
// log_failed, exit status 3); after space is freed, the offline checker
// passes and a restart holds everything acknowledged.
func TestDiskFull(t *testing.T) {
	for _, fs := range []struct {
		name  string
		mount func(*testing.T, int) string
	}{
		{"tmpfs", mountTmpfs},
		{"ext4", mountExt4},
	} {
		t.Run(fs.name, func(t *testing.T) {
			mnt := fs.mount(t, 16<<20)
			dir := filepath.Join(mnt, "data")
			p := startProc(t, "server", procOptions{dataDir: dir})
			load := newFaultLoad(t, p, "user")
			for range 5 {
				if !load.step() {
					t.Fatalf("step failed before the disk was filled\n%s", p.output())
				}
			}
			filler := fill(t, mnt, 32<<10)
			for load.steps < maxFaultSteps && load.step() {
			}
			if load.steps >= maxFaultSteps || load.refused != 1 {
				t.Fatalf("after %d steps, %d answers 503 log_failed; want the disk full and one", load.steps, load.refused)
			}
			if code := p.wait(); code != 3 {
				t.Fatalf("exit status %d, want 3", code)
			}
			if !p.stderr.contains("no space left on device") {
				t.Errorf("no log line names the full disk")
			}
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			checkAfterCrash(t, dir)
			q := startProc(t, "restarted", procOptions{dataDir: dir})
			load.verify(q)
			if code := q.terminate(); code != 0 {
				t.Fatalf("restarted server: exit %d", code)
			}
			t.Logf("%d steps; %d registrations and %d buys acknowledged before the disk filled", load.steps, len(load.registered), len(load.bought))
		})
	}
}

// TestDiskFullForSnapshot leaves room for the log but not for a snapshot:
// the snapshot fails and its temporary file is removed, the previous
// snapshot and the log stay intact, and trading goes on; the offline
// checker passes and a restart holds everything acknowledged.
func TestDiskFullForSnapshot(t *testing.T) {
	mnt := mountTmpfs(t, 4<<20)
	dir := filepath.Join(mnt, "data")
	// The first run ends with a clean stop, whose final snapshot covers
	// everything: no snapshot is due when the second run starts.
	first := startProc(t, "first", procOptions{dataDir: dir})
	load := newFaultLoad(t, first, "user")
	for range 60 {
		if !load.step() {
			t.Fatalf("step %d failed\n%s", load.steps, first.output())
		}
	}
	if code := first.terminate(); code != 0 {
		t.Fatalf("first run: exit %d", code)
	}
	before := readSnapshots(t, dir)
	largest := 0
	for _, b := range before {
		largest = max(largest, len(b))
	}
	// A snapshot once 10 records were logged, checked every second.
	backups := filepath.Join(mnt, "backups")
	p := startProc(t, "server", procOptions{dataDir: dir, args: []string{"-snapshot-every", "1h", "-snapshot-every-records", "10",
		"-backup-dir", backups}})
	load.c = p.client(nil)
	step := func(what string) {
		t.Helper()
		if !load.step() {
			t.Fatalf("step %d failed %s\n%s", load.steps, what, p.output())
		}
	}
	// The next snapshot is larger than the last; three quarters of it fit,
	// and the log's next records too.
	fill(t, mnt, int64(largest)*3/4)
	for range 6 {
		step("while the snapshot had no room")
	}
	if _, err := p.stderr.waitFor(func(s string) bool { return strings.Contains(s, "snapshot failed") }, startTimeout); err != nil {
		t.Fatalf("no snapshot failed (free %d bytes, last snapshot %d): %v", freeBytes(t, mnt), largest, err)
	}
	// The failed snapshot's file is gone, the previous ones unchanged, and
	// trading goes on.
	if tmps, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*.tmp")); len(tmps) != 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
	after := readSnapshots(t, dir)
	if len(after) != len(before) {
		t.Errorf("snapshots %d after the failure, %d before", len(after), len(before))
	}
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("snapshot %s changed", name)
		}
	}
	for range 3 {
		step("after the failed snapshot")
	}
	// A backup has no room either: it fails and leaves nothing behind that
	// could be taken for a data directory.
	r := load.c.do(http.MethodPost, "/api/admin/backup", sessionCred(load.c.login("admin", testAdminPassword)), map[string]any{"name": "full"})
	if r.status != http.StatusInternalServerError {
		t.Errorf("backup on a full disk: %d %s, want 500", r.status, r.body)
	}
	if _, err := os.Stat(filepath.Join(backups, "full")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed backup left %s: %v", filepath.Join(backups, "full"), err)
	}
	step("after the failed backup")
	p.kill()
	checkAfterCrash(t, dir)
	q := startProc(t, "restarted", procOptions{dataDir: dir})
	load.verify(q)
	t.Logf("largest snapshot %d bytes; %d steps acknowledged; %d snapshot failures logged", largest, load.steps, p.stderr.count("snapshot failed"))
}

// readSnapshots returns the content of every snapshot file, by name.
func readSnapshots(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "snapshots", "snapshot-*.snap"))
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(n)] = b
	}
	if len(out) == 0 {
		t.Fatalf("no snapshot in %s", dir)
	}
	return out
}
