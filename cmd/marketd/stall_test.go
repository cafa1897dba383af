package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStallRecorder runs a server with the stall recorder on and a
// threshold every request and commit passes, and checks that it writes
// execution traces named for their trigger, keeps no more than
// -stall-files of them, counts them in its metrics, logs each, and that
// no secret of the workload is in them (docs/OPERATIONS.md, "Stall
// traces").
func TestStallRecorder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "stalls")
	p := startProc(t, "stall recorder", procOptions{dataDir: t.TempDir(), args: []string{
		"-stall-dir", dir, "-stall-threshold", "1us", "-stall-window", "100ms", "-stall-files", "3"}})
	c := p.client(nil)
	res := runWorkload(t, c)

	// Every request and commit passed the threshold: the traces follow
	// one per window while the workload runs.
	deadline := time.Now().Add(20 * time.Second)
	for len(finishedTraces(t, dir)) < 3 && time.Now().Before(deadline) {
		// Requests keep the triggers coming after the workload.
		c.do(http.MethodGet, "/healthz", cred{}, nil)
		time.Sleep(50 * time.Millisecond)
	}
	m, _ := scrape(t, c.base+"/metrics")
	if m[`marketd_stall_traces_written_total`] < 3 || m[`marketd_stall_triggers_total{kind="request"}`] == 0 ||
		m[`marketd_stall_triggers_total{kind="commit"}`] == 0 {
		t.Fatalf("stall metrics: written %v, request triggers %v, commit triggers %v; want >= 3 traces and both kinds",
			m[`marketd_stall_traces_written_total`], m[`marketd_stall_triggers_total{kind="request"}`],
			m[`marketd_stall_triggers_total{kind="commit"}`])
	}
	if !p.stderr.contains("stall recorder on") || !p.stderr.contains("stall: trace written") {
		t.Fatalf("no log line of the stall recorder:\n%s", p.output())
	}
	if code := p.terminate(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0\n%s", code, p.output())
	}

	// The files are read once the server has stopped: while it runs, each
	// new trace may remove the oldest between the listing and the read.
	names := finishedTraces(t, dir)
	if len(names) != 3 {
		t.Fatalf("%d traces in %s, want -stall-files=3: %q\n%s", len(names), dir, names, p.output())
	}
	kinds := map[string]bool{}
	for _, name := range names {
		if !strings.HasPrefix(name, "stall-") || !strings.HasSuffix(name, ".trace") {
			t.Fatalf("file %s in %s is not a trace", name, dir)
		}
		kinds[name[strings.LastIndexByte(name, '-')+1:len(name)-len(".trace")]] = true
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("go 1.")) || !bytes.Contains(b[:16], []byte(" trace")) {
			t.Fatalf("%s begins %q, not an execution trace", name, b[:min(16, len(b))])
		}
		for _, s := range res.secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Fatalf("%s holds a secret of the workload (%d bytes long)", name, len(s))
			}
		}
	}
	for k := range kinds {
		if k != "request" && k != "commit" && k != "held" {
			t.Fatalf("trace kind %q, want request, commit or held: %q", k, names)
		}
	}
}

// finishedTraces lists dir's names but those of traces still being
// written: the recorder writes each to a name with a .tmp suffix and
// renames it once whole (internal/stall/files.go), so a listing may catch
// one half-written.
func finishedTraces(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tmp") {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestStallDirRefused checks that a -stall-dir that cannot be made stops
// the server at start with an error naming it.
func TestStallDirRefused(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "bad stall dir", procOptions{dataDir: t.TempDir(), mayDie: true,
		args: []string{"-stall-dir", filepath.Join(file, "stalls")}})
	if code := p.wait(); code == 0 || !p.stderr.contains("stall: make directory") {
		t.Fatalf("exit code %d, want a failure naming the stall directory:\n%s", code, p.output())
	}
}
