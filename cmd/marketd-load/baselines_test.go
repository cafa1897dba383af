package main

import (
	"testing"
)

// TestBaselineProcessProcessors starts the baselines' child at processor
// counts other than its own default (one spare beyond one per CPU, or
// whatever GOMAXPROCS this test runs with) and checks that it runs on the
// count it was given, as the spawned marketd does: the handlers marketd is
// compared with must run on the same count as marketd.
func TestBaselineProcessProcessors(t *testing.T) {
	for _, n := range []int{1, 5} {
		bs, err := startBaselineProcess(t.TempDir(), n, 0)
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
