package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// TestReadiness checks /healthz, /readyz and the API while a log of a few
// thousand records is recovered, once ready, and while draining after
// SIGTERM (docs/OPERATIONS.md, "Health").
//
// Recovery is held, deterministically, at its first step: the newest
// snapshot is a named pipe, whose read blocks until the test writes to it.
// What the test writes is not a snapshot, so recovery sets it aside and
// replays the whole log.
func TestReadiness(t *testing.T) {
	dir := t.TempDir()
	first := startProc(t, "writer", procOptions{dataDir: dir, args: []string{"-default-tier", "unlimited"}})
	c := first.client(nil)
	admin := c.login("admin", testAdminPassword)
	m := c.createMarket(sessionCred(admin), "readiness", nil)
	const traders, tradesEach = 8, 250
	var wg sync.WaitGroup
	for i := range traders {
		tok, _ := c.register(fmt.Sprintf("ready-%d", i))
		key := c.createKey(sessionCred(tok), "k", []string{"read", "trade"}, nil).Key
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range tradesEach {
				if r, err := c.try(http.MethodPost, "/api/markets/trade", keyCred(key), tradeBody(m.ID.String(), "yes", "buy", "0.01")); err != nil || r.status != http.StatusOK {
					t.Errorf("trade: %v, status %d: %s", err, r.status, r.body)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	first.kill() // no final snapshot: the restart replays the whole log

	fifo := filepath.Join(dir, "snapshots", fmt.Sprintf("snapshot-%020d.snap", 1))
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	p := startProc(t, "recovering", procOptions{dataDir: dir, noWaitReady: true, args: []string{"-drain-delay", "8s"}})
	c = p.client(nil)
	expect := func(what, path string, status int, msg string) {
		t.Helper()
		r := c.do(http.MethodGet, path, cred{}, nil)
		if r.status != status {
			t.Fatalf("%s: GET %s: status %d, want %d: %s", what, path, r.status, status, r.body)
		}
		if msg != "" && !regexp.MustCompile(`"error":"`+msg+`"`).Match(r.body) {
			t.Fatalf("%s: GET %s: body %s, want error %q", what, path, r.body, msg)
		}
	}
	expect("recovering", "/healthz", 200, "")
	expect("recovering", "/readyz", 503, "Recovering")
	expect("recovering", "/api/markets", 503, "Recovering")
	if s, _ := scrape(t, c.base+"/metrics"); s[`marketd_phase{phase="recovering"}`] != 1 || s["marketd_ready"] != 0 {
		t.Errorf("while recovering: marketd_phase recovering %v, marketd_ready %v", s[`marketd_phase{phase="recovering"}`], s["marketd_ready"])
	}

	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("not a snapshot"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.stderr.waitFor(readyRE.MatchString, startTimeout); err != nil {
		t.Fatalf("no ready line: %v", err)
	}
	line, err := p.stderr.waitFor(regexp.MustCompile(`msg=recovered `).MatchString, startTimeout)
	if err != nil {
		t.Fatal(err)
	}
	replayed, _ := strconv.Atoi(regexp.MustCompile(`replayed_records=(\d+)`).FindStringSubmatch(line)[1])
	if replayed < traders*tradesEach || !regexp.MustCompile(`snapshot=false .*skipped_snapshots=1 `).MatchString(line) {
		t.Errorf("recovered line %q: want the snapshot skipped and at least %d records replayed", line, traders*tradesEach)
	}
	expect("ready", "/readyz", 200, "")
	expect("ready", "/api/markets", 200, "")
	s, _ := scrape(t, c.base+"/metrics")
	if s["marketd_recovery_replayed_records"] != float64(replayed) || s["marketd_recovery_skipped_snapshots"] != 1 || s["marketd_ready"] != 1 {
		t.Errorf("recovery metrics: replayed %v (logged %d), skipped %v, ready %v",
			s["marketd_recovery_replayed_records"], replayed, s["marketd_recovery_skipped_snapshots"], s["marketd_ready"])
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := p.stderr.waitFor(regexp.MustCompile(`msg=draining `).MatchString, startTimeout); err != nil {
		t.Fatalf("no draining line: %v", err)
	}
	// The drain delay (8 s) keeps the listener open: not ready, still
	// serving.
	expect("draining", "/readyz", 503, "Draining")
	expect("draining", "/healthz", 200, "")
	expect("draining", "/api/markets", 200, "")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
}
