package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestBaselineProcessProcessors starts the baselines' child at processor
// counts other than its own default (one spare beyond one per CPU, or
// whatever GOMAXPROCS this test runs with) and checks that it runs on the
// count it was given, as the spawned marketd does: the handlers marketd is
// compared with must run on the same count as marketd.
func TestBaselineProcessProcessors(t *testing.T) {
	for _, n := range []int{1, 5} {
		bs, err := startBaselineProcess(t.TempDir(), n, floorOptions{})
		if err != nil {
			t.Fatalf("GOMAXPROCS %d: %v", n, err)
		}
		got := bs.procs
		if err := bs.close(); err != nil {
			t.Errorf("GOMAXPROCS %d: stop: %v", n, err)
		}
		if got != n {
			t.Errorf("the baselines' process runs on %d processors, want %d", got, n)
		}
	}
}

// TestBaselineProcessBallast starts the baselines' child with a ballast and
// checks that the child's resident memory holds it: every page of it was
// written once.
func TestBaselineProcessBallast(t *testing.T) {
	const ballast = 64 << 20
	bs, err := startBaselineProcess(t.TempDir(), 2, floorOptions{ballastBytes: ballast})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := bs.close(); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", bs.pid))
	if err != nil {
		t.Skipf("no /proc status of the child to read its resident size: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rss, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		var kb int64
		if _, err := fmt.Sscanf(rss, "%d kB", &kb); ok && err == nil {
			if kb*1024 < ballast {
				t.Errorf("the child's resident size %d kB; want at least its ballast, %d kB", kb, ballast/1024)
			}
			return
		}
	}
	t.Fatalf("no VmRSS in the child's status: %v", sc.Err())
}
