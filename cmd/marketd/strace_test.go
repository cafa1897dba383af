package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The tests in this file reach the system calls that tidwall/wal makes
// itself, through package os, out of internal/vfs's reach: strace kills the
// real server at its Nth call of a kind, or makes its Nth fsync fail with
// EIO, and the restarted server must hold everything it acknowledged.
// Injection applies only to the calls strace traces (-e trace). strace's
// --seccomp-bpf, which would spare the other calls a stop, silently drops
// signal injection (strace 6.1, checked on a program that fsyncs in a
// loop), so it is not used.

var (
	straceOnce sync.Once
	straceErr  error
)

// requireStrace skips the test, with one message saying why, where strace
// is missing or cannot attach (no ptrace in a container, for example).
func requireStrace(t *testing.T) {
	t.Helper()
	straceOnce.Do(func() {
		if _, err := exec.LookPath("strace"); err != nil {
			straceErr = fmt.Errorf("strace is not installed (.ci/run installs it): %w", err)
			return
		}
		out, err := exec.Command("strace", "-f", "-o", "/dev/null", "-e", "trace=fsync",
			"-e", "inject=fsync:error=EIO:when=1", "true").CombinedOutput()
		if err != nil {
			straceErr = fmt.Errorf("strace cannot attach here: %v: %s", err, strings.TrimSpace(string(out)))
		}
	})
	if straceErr != nil {
		t.Skipf("SKIP: the strace fault tests of tidwall's own system calls did not run: %v", straceErr)
	}
}

// straceWrapper returns the command line that runs the server under strace
// with one injection for the given calls.
func straceWrapper(calls, inject string) []string {
	return []string{"strace", "-f", "-o", "/dev/null", "-e", "trace=" + calls, "-e", "inject=" + calls + ":" + inject}
}

// TestKillAtSystemCall kills the server at its Nth fsync, write, rename or
// ftruncate while it registers accounts and trades, with a snapshot every
// 100 ms (renames: the device key's at start, then those of the snapshots
// and of the spare, the oldest snapshot kept to be written over, which the
// later kills fall among; ftruncates: the cut of a snapshot written over
// the spare): the offline checker must pass on the directory as the kill
// left it, and a restart must hold every acknowledged operation. While
// trading goes on nothing is unlinked any more (docs/ARCHITECTURE.md,
// "Snapshots while trading goes on").
func TestKillAtSystemCall(t *testing.T) {
	requireStrace(t)
	// strace counts a call's invocations per thread, and a periodic
	// snapshot writes its accounts, and cuts the spare, on a new thread
	// each time (-snapshot-nice): its calls would always be that thread's
	// first. So the snapshots run here at the process's priority, on the
	// threads of the rest; their file operations come in the same order
	// either way, and snapshot's TestCrashAtEveryOperationOfASnapshot
	// crashes at each of them with the thread of their own.
	snapArgs := []string{"-snapshot-every", "100ms", "-snapshot-every-records", "4", "-snapshot-nice", "0"}
	for _, tc := range []struct {
		calls string
		nths  []int
	}{
		{"fsync", []int{3, 14, 21}},
		{"write", []int{40, 90}},
		{"rename,renameat,renameat2", []int{1, 4, 5, 6, 7}},
		{"ftruncate", []int{1, 3}},
	} {
		for _, n := range tc.nths {
			name := fmt.Sprintf("%s#%d", strings.SplitN(tc.calls, ",", 2)[0], n)
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				p := startProc(t, "traced", procOptions{dataDir: dir, args: snapArgs, mayDie: true,
					wrapper: straceWrapper(tc.calls, fmt.Sprintf("signal=KILL:when=%d", n))})
				load := newFaultLoad(t, p, "user")
				for load.steps < maxFaultSteps && load.step() {
				}
				if load.steps >= maxFaultSteps {
					t.Fatalf("not killed at %s after %d steps", name, load.steps)
				}
				p.wait()
				checkAfterCrash(t, dir)
				q := startProc(t, "restarted", procOptions{dataDir: dir})
				load.verify(q)
				t.Logf("%d steps, %d registrations and %d buys acknowledged", load.steps, len(load.registered), len(load.bought))
			})
		}
	}
}

// maxFaultSteps bounds the load of one fault test: the fault is met well
// before (a few snapshots at most).
const maxFaultSteps = 400

// checkAfterCrash runs the offline checker on a directory as a crash left
// it: it must pass (a torn tail is reported, not an error).
func checkAfterCrash(t *testing.T, dir string) {
	t.Helper()
	if code, out := runChecker(t, "-data", dir); code != checkOK {
		t.Fatalf("checker after the crash: exit %d\n%s", code, out)
	}
}

// TestKillAtRepairTruncate leaves a torn tail, then kills the server at
// the ftruncate with which its start cuts it (after the damaged segment
// was copied aside): the next start must still repair and recover.
func TestKillAtRepairTruncate(t *testing.T) {
	requireStrace(t)
	dir := t.TempDir()
	p := startProc(t, "first", procOptions{dataDir: dir})
	load := newFaultLoad(t, p, "user")
	for range 3 {
		load.step()
	}
	p.kill()
	appendTo(t, lastSegmentOf(t, dir), []byte{0x40, 1, 2, 3})
	p = startProc(t, "killed in repair", procOptions{dataDir: dir, mayDie: true,
		wrapper: straceWrapper("ftruncate", "signal=KILL:when=1")})
	p.wait()
	if p.addr != "" {
		t.Fatalf("the server started: its repair made no ftruncate")
	}
	if broken, _ := filepath.Glob(filepath.Join(dir, "wal", "*.broken")); len(broken) != 1 {
		t.Fatalf("copies aside: %v, want one made before the truncation", broken)
	}
	q := startProc(t, "restarted", procOptions{dataDir: dir})
	load.verify(q)
	if code := q.terminate(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	checkAfterCrash(t, dir)
}

// TestFsyncEIOIsFailStop makes one fsync of the log fail with EIO: the
// operation waiting on it and every later request are answered 503
// log_failed, /readyz included, the process exits with status 3 without
// retrying the fsync (only that one call fails: a retry would succeed and
// the server would go on), and a restart holds every acknowledged change.
func TestFsyncEIOIsFailStop(t *testing.T) {
	requireStrace(t)
	for _, n := range []int{12, 17} {
		t.Run(fmt.Sprintf("fsync#%d", n), func(t *testing.T) {
			dir := t.TempDir()
			p := startProc(t, "traced", procOptions{dataDir: dir,
				wrapper: straceWrapper("fsync", fmt.Sprintf("error=EIO:when=%d", n))})
			load := newFaultLoad(t, p, "user")
			if load.market == "" {
				t.Fatalf("setup failed before the injected fsync error\n%s", p.output())
			}
			for load.steps < maxFaultSteps && load.step() {
			}
			if load.refused != 1 {
				t.Fatalf("%d answers 503 log_failed to the operation waiting on the failed fsync, want 1", load.refused)
			}
			c := p.client(nil)
			for _, path := range []string{"/readyz", "/api/markets/active"} {
				r, err := c.try("GET", path, cred{}, nil)
				if err == nil && (r.status != 503 || errorCode(r.body) != "log_failed") {
					t.Errorf("GET %s after the failure: %d %s, want 503 log_failed", path, r.status, r.body)
				}
			}
			if code := p.wait(); code != 3 {
				t.Fatalf("exit status %d after a failed fsync, want 3", code)
			}
			if !p.stderr.contains("write-ahead log failed") {
				t.Errorf("no log line says why the server stopped")
			}
			checkAfterCrash(t, dir)
			q := startProc(t, "restarted", procOptions{dataDir: dir})
			load.verify(q)
			t.Logf("%d steps, %d registrations and %d buys acknowledged before the failure", load.steps, len(load.registered), len(load.bought))
		})
	}
}
