package stall

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marketd/wal"
)

// The recorder's tests run one after another: the runtime allows one
// flight recorder at a time.

// traceHeader is how every Go execution trace begins ("go 1.26 trace"
// and padding).
var traceHeader = []byte("go 1.")

// newTestRecorder starts a recorder on a new directory with cfg's
// non-zero fields, and closes it at the test's end.
func newTestRecorder(t *testing.T, cfg Config) (*Recorder, string) {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(t.TempDir(), "stalls")
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	r, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := r.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(r.Close)
	return r, cfg.Dir
}

// waitTraces waits until dir holds n traces, and returns their names.
func waitTraces(t *testing.T, dir string, n int, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		names, err := traces(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(names) >= n || time.Now().After(deadline) {
			if len(names) != n {
				t.Fatalf("%d traces in %s after %v, want %d: %q", len(names), dir, timeout, n, names)
			}
			return names
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkTrace fails unless name in dir is a Go execution trace of more
// than its header.
func checkTrace(t *testing.T, dir, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, traceHeader) || !bytes.Contains(b[:16], []byte(" trace")) || len(b) <= 16 {
		t.Fatalf("%s: %d bytes beginning %q, not an execution trace", name, len(b), b[:min(len(b), 16)])
	}
}

func TestConfigBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // in the error; "" for none
	}{
		{"defaults", Config{Dir: t.TempDir()}, ""},
		{"no dir", Config{}, "Dir is empty"},
		{"negative threshold", Config{Dir: "d", Threshold: -time.Millisecond}, "Threshold"},
		{"threshold too long", Config{Dir: "d", Threshold: 2 * time.Minute}, "Threshold"},
		{"window too short", Config{Dir: "d", Window: time.Millisecond}, "Window"},
		{"window too long", Config{Dir: "d", Window: time.Hour}, "Window"},
		{"negative files", Config{Dir: "d", Files: -1}, "Files"},
		{"too many files", Config{Dir: "d", Files: MaxFiles + 1}, "Files"},
		{"file too small", Config{Dir: "d", MaxFileBytes: 100}, "MaxFileBytes"},
		{"file too large", Config{Dir: "d", MaxFileBytes: 8 << 30}, "MaxFileBytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("New: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// TestRecorderFires checks that each kind of duration past the threshold
// writes a trace named for it, and that one at the threshold writes none.
func TestRecorderFires(t *testing.T) {
	const threshold = 20 * time.Millisecond
	for _, tc := range []struct {
		kind    string
		under   func(r *Recorder)
		observe func(r *Recorder)
	}{
		{"request",
			func(r *Recorder) { r.ObserveRequest("/api/markets/{id}/trade", threshold) },
			func(r *Recorder) { r.ObserveRequest("/api/markets/{id}/trade", threshold+time.Millisecond) }},
		{"commit",
			func(r *Recorder) { r.ObserveCommit(wal.Commit{Records: 3, Took: threshold, Held: threshold}) },
			func(r *Recorder) { r.ObserveCommit(wal.Commit{Records: 3, Took: 2 * threshold}) }},
		{"held",
			func(r *Recorder) { r.ObserveCommit(wal.Commit{Records: 3, Took: time.Millisecond}) },
			func(r *Recorder) {
				r.ObserveCommit(wal.Commit{Records: 3, Took: time.Millisecond, Held: 2 * threshold})
			}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			r, dir := newTestRecorder(t, Config{Threshold: threshold, Window: MinWindow})
			tc.under(r)
			time.Sleep(3 * MinWindow)
			waitTraces(t, dir, 0, 0)
			tc.observe(r)
			names := waitTraces(t, dir, 1, 10*time.Second)
			if !strings.HasSuffix(names[0], "-"+tc.kind+fileSuffix) {
				t.Fatalf("trace %s: want kind %s in its name", names[0], tc.kind)
			}
			checkTrace(t, dir, names[0])
			if s := r.Stats(); s.Written != 1 || s.Dropped != 0 || r.totalSeen() != 1 {
				t.Fatalf("stats %+v, want 1 trigger and 1 trace written", s)
			}
		})
	}
}

// TestRecorderFoldsTriggers checks that the triggers of one stall give
// one trace, and that a trigger within the window after it waits for the
// window's end and gives a second.
func TestRecorderFoldsTriggers(t *testing.T) {
	const window = 500 * time.Millisecond
	r, dir := newTestRecorder(t, Config{Threshold: time.Millisecond, Window: window})
	for range 100 {
		r.ObserveRequest("/x", time.Second)
	}
	first := waitTraces(t, dir, 1, 10*time.Second)
	time.Sleep(window / 5)
	if names, _ := traces(dir); len(names) != 1 {
		t.Fatalf("100 triggers at once gave %d traces, want 1: %q", len(names), names)
	}
	began := time.Now()
	r.ObserveRequest("/x", time.Second)
	names := waitTraces(t, dir, 2, 10*time.Second)
	if names[0] != first[0] {
		t.Fatalf("traces %q, want the first %s kept", names, first[0])
	}
	// The second waited out the rest of the first one's window.
	if waited := time.Since(began); waited < window/2 {
		t.Fatalf("second trace after %v, want it held to the window (%v) after the first", waited, window)
	}
	if s := r.Stats(); s.Triggers[KindRequest] != 101 || s.Written != 2 {
		t.Fatalf("stats %+v, want 101 request triggers and 2 traces", s)
	}
}

// TestRecorderBoundsFiles checks that the directory keeps the newest
// Files traces, and that other files in it are left alone.
func TestRecorderBoundsFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "stalls")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, _ := newTestRecorder(t, Config{Dir: dir, Threshold: time.Millisecond, Window: MinWindow, Files: 2})
	var all []string
	for i := range 4 {
		r.ObserveRequest("/x", time.Second)
		names := waitTraces(t, dir, min(i+1, 2), 10*time.Second)
		for len(names) == 2 && i >= 2 && names[1] == all[len(all)-1] {
			time.Sleep(10 * time.Millisecond) // the rotation removed one, the new one is being written
			names = waitTraces(t, dir, 2, 10*time.Second)
		}
		all = append(all, names[len(names)-1])
	}
	names := waitTraces(t, dir, 2, 0)
	if names[0] != all[2] || names[1] != all[3] {
		t.Fatalf("traces %q, want the newest two of %q", names, all)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("a file not a trace was touched: %v", err)
	}
}

// TestRecorderSizeBound checks that a trace larger than MaxFileBytes is
// not kept, whole or cut.
func TestRecorderSizeBound(t *testing.T) {
	r, dir := newTestRecorder(t, Config{Threshold: time.Millisecond, Window: MinWindow, MaxFileBytes: MinMaxFileBytes})
	r.ObserveRequest("/x", time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for r.Stats().Dropped == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := r.Stats(); s.Dropped != 1 || s.Written != 0 {
		t.Fatalf("stats %+v, want the trace dropped", s)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("%d files left in %s, want none (not even a half-written one)", len(entries), dir)
	}
}

// TestPrepareDirRemovesHalfWritten checks that New removes the
// half-written traces of an earlier process and keeps the whole ones.
func TestPrepareDirRemovesHalfWritten(t *testing.T) {
	dir := t.TempDir()
	whole := filePrefix + "20260101T000000.000Z-request" + fileSuffix
	half := filePrefix + "20260101T000001.000Z-commit" + fileSuffix + tmpSuffix
	for _, name := range []string{whole, half} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := prepareDir(dir); err != nil {
		t.Fatal(err)
	}
	names, err := traces(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != whole {
		t.Fatalf("traces %q, want only %s", names, whole)
	}
	if _, err := os.Stat(filepath.Join(dir, half)); !os.IsNotExist(err) {
		t.Fatalf("half-written trace still there: %v", err)
	}
}

// TestRecorderIdle checks that a recorder not started, or closed, takes no
// trigger, and that Close may be called twice.
func TestRecorderIdle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "stalls", "made")
	r, err := New(Config{Dir: dir, Threshold: time.Millisecond, Window: MinWindow})
	if err != nil {
		t.Fatal(err)
	}
	r.ObserveRequest("/x", time.Second)
	r.Close()
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	r.Close()
	r.ObserveCommit(wal.Commit{Took: time.Second})
	time.Sleep(3 * MinWindow)
	waitTraces(t, dir, 0, 0)
	if s := r.Stats(); r.totalSeen() != 0 || s.Written != 0 {
		t.Fatalf("stats %+v, want nothing seen", s)
	}
}
