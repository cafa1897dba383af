package drill

import (
	"context"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDrill runs a short drill (3 cycles) against the marketd of this
// tree: the one `make test` runs; `make drill` runs long ones.
func TestDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and drills marketd; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "marketd")
	// The test runs in bench/drill: the module's cmd/marketd is two up.
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/marketd").CombinedOutput(); err != nil {
		t.Fatalf("build marketd: %v\n%s", err, out)
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sum, err := Run(ctx, Options{Binary: bin, DataDir: t.TempDir(), Cycles: 3, Bots: 4, Markets: 2,
		MinLoad: 50 * time.Millisecond, MaxLoad: 400 * time.Millisecond, SnapshotEveryRecords: 100, Seed: seed, Out: &out})
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Log(sum.Line())
	if !sum.OK() || sum.Cycles != 3 || sum.Checks != 4 || sum.Acknowledged == 0 {
		t.Errorf("drill: %s; violations: %q", sum.Line(), sum.Violations)
	}
}
