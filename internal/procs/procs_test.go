package procs

import (
	"runtime"
	"strings"
	"testing"
)

// TestSet checks each way the count is chosen: the default plus the spare
// processors, none spare, the environment's GOMAXPROCS winning, and a
// count out of range refused without a change, and a second call giving
// the same count as the first.
func TestSet(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	runtime.SetDefaultGOMAXPROCS()
	base := runtime.GOMAXPROCS(0)
	noEnv := func(string) string { return "" }
	withEnv := func(k string) string {
		if k == EnvVar {
			return "1"
		}
		return ""
	}
	for _, tc := range []struct {
		name    string
		spare   int
		getenv  func(string) string
		want    int
		wantErr string
	}{
		{"one spare", 1, noEnv, base + 1, ""},
		{"one spare again", 1, noEnv, base + 1, ""},
		{"three spare", 3, noEnv, base + 3, ""},
		// The runtime applied the environment's count at start: Set
		// leaves the count in force alone.
		{"environment wins", 1, withEnv, base + 3, ""},
		{"none spare", 0, noEnv, base, ""},
		{"negative", -1, noEnv, base, "out of range"},
		{"too many", MaxSpare + 1, noEnv, base, "out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Set(tc.spare, tc.getenv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Set(%d): err %v, want %q", tc.spare, err, tc.wantErr)
				}
			} else if err != nil || got != tc.want {
				t.Fatalf("Set(%d): %d, %v; want %d", tc.spare, got, err, tc.want)
			}
			if now := runtime.GOMAXPROCS(0); now != tc.want {
				t.Fatalf("Set(%d): GOMAXPROCS is %d, want %d", tc.spare, now, tc.want)
			}
		})
	}
}

// TestForRecovery: recovery runs without the spare processors, and never
// on more processors than CPUs when the environment chose the count.
func TestForRecovery(t *testing.T) {
	cpus := runtime.NumCPU()
	for _, tc := range []struct {
		name     string
		n, spare int
		getenv   func(string) string
		want     int
	}{
		{"one spare", cpus + 1, 1, noEnv, cpus},
		{"no spare", cpus, 0, noEnv, cpus},
		{"two spare", cpus + 2, 2, noEnv, cpus},
		{"never below one", 1, 1, noEnv, 1},
		{"environment above the CPUs", cpus + 3, 1, env, cpus},
		{"environment below the CPUs", 1, 1, env, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ForRecovery(tc.n, tc.spare, tc.getenv); got != tc.want {
				t.Errorf("ForRecovery(%d, %d): %d, want %d", tc.n, tc.spare, got, tc.want)
			}
		})
	}
}

func TestHasSpare(t *testing.T) {
	cpus := runtime.NumCPU()
	for _, tc := range []struct {
		name     string
		n, spare int
		getenv   func(string) string
		want     bool
	}{
		{"one spare", cpus + 1, 1, noEnv, true},
		{"no spare", cpus, 0, noEnv, false},
		{"environment above the CPUs", cpus + 1, 0, env, true},
		{"environment at the CPUs", cpus, 1, env, false},
		{"environment below the CPUs", 1, 1, env, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HasSpare(tc.n, tc.spare, tc.getenv); got != tc.want {
				t.Errorf("HasSpare(%d, %d): %v, want %v", tc.n, tc.spare, got, tc.want)
			}
		})
	}
}

// noEnv is an environment without GOMAXPROCS, env one that sets it.
func noEnv(string) string { return "" }

func env(k string) string {
	if k == EnvVar {
		return "x"
	}
	return ""
}
