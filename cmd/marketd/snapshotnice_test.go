//go:build linux

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"marketd/snapshot"
)

// firstSnapshotLine registers an account on p, so that there is something
// to snapshot, and returns the log line of p's first periodic snapshot,
// waiting up to 10 s for it.
func firstSnapshotLine(t *testing.T, p *proc) string {
	t.Helper()
	p.client(nil).register("snapper")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(p.output(), "\n") {
			if strings.Contains(line, `msg="snapshot written"`) {
				return line
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no periodic snapshot within 10 s:\n%s", p.output())
	return ""
}

// TestSnapshotNiceEndToEnd checks -snapshot-nice on the real server: a
// periodic snapshot walks its accounts at the nice value given, as its log
// line says, and at the process's own with 0. That the thread runs at it
// is snapshot's TestSnapshotThreadNice. Only Linux lowers a thread.
func TestSnapshotNiceEndToEnd(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, fmt.Sprintf("thread_nice=%d", snapshot.DefaultThreadNice)},
		{[]string{"-snapshot-nice", "0"}, "thread_nice=0"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			p := startProc(t, "snapshot nice "+tt.want, procOptions{dataDir: t.TempDir(),
				args: append([]string{"-snapshot-every", "100ms"}, tt.args...)})
			if line := firstSnapshotLine(t, p); !strings.Contains(line, tt.want) {
				t.Fatalf("%v: %q, want %s", tt.args, line, tt.want)
			}
		})
	}
}
