package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"marketd/core/money"
)

// The legacy data directory: written by the marketd of the commit before
// splits moved to the curve and custody became manual (e00a1d2), by
// TestWriteLegacyDataDir (build tag legacygen) run in that commit's tree,
// with what its API answered then (legacyExpectFile). It holds sets split
// at par and still held, a merge at par of bought shares, USDC deposits, a
// queued withdrawal and a challenged oracle proposal with free votes.
const (
	legacyDir        = "testdata/legacy-e00a1d2"
	legacyExpectFile = "testdata/legacy-e00a1d2.json"
)

// legacyFlags are the flags both runs use: deadlines far away, so that the
// oracle's proposal is still open whenever the test runs.
var legacyFlags = []string{"-oracle-challenge-window", "100000h", "-oracle-vote-window", "100000h"}

// legacyAccounts are the accounts the writer registers, in order.
var legacyAccounts = []string{"alice", "bob", "carol", "dave", "erin"}

// legacyExpect is what the old server answered: per account and path, and
// per market, the JSON trees; and the market IDs by name.
type legacyExpect struct {
	Markets map[string]string          `json:"markets"`
	Trees   map[string]json.RawMessage `json:"trees"`
}

// legacyPaths are the paths observed for each account.
var legacyPaths = []string{"/api/portfolio", "/api/points?limit=1000", "/api/token/balance?limit=1000"}

// observeLegacy reads every tree the expectation holds, logging in each
// account by its name.
func observeLegacy(c *client, markets map[string]string) map[string]any {
	out := map[string]any{}
	var cr cred
	for _, name := range legacyAccounts {
		cr = sessionCred(c.login(name, ""))
		for _, path := range legacyPaths {
			out[name+" "+path] = c.tree(path, cr)
		}
	}
	for name, id := range markets {
		out["market "+name] = c.tree("/api/markets/"+id, cred{})
	}
	out["oracle"] = c.tree("/api/oracle/status?market_id="+markets["closed"], cr)
	return out
}

// subsetDiff returns where got differs from want, ignoring the keys of
// objects in got that want lacks (fields added since), or "".
func subsetDiff(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %v, want an object", path, got)
		}
		for k, wv := range w {
			if d := subsetDiff(path+"."+k, wv, g[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %v, want %d items", path, got, len(w))
		}
		for i := range w {
			if d := subsetDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("%s: got %v, want %v", path, got, want)
	}
	return ""
}

// copyDir copies the files of dir (one level of subdirectories) to a new
// temporary directory, so that the test data is never changed.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", dir, err)
	}
	return dst
}

// TestLegacyDataDirRecovers starts today's server on the data directory of
// e00a1d2 and finds every balance, ledger, position, market and proposal
// the old server showed (docs/API.md, "Split and merge": sets split at par
// then stay outside q and are merged at par first). Then the par sets
// merge at exactly 1 each, and new splits go on the curve.
func TestLegacyDataDirRecovers(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(legacyExpectFile)
	if err != nil {
		t.Fatal(err)
	}
	var want legacyExpect
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "on the legacy data", procOptions{dataDir: copyDir(t, legacyDir), args: legacyFlags})
	c := p.client(nil)
	got := observeLegacy(c, want.Markets)
	if len(got) != len(want.Trees) {
		t.Fatalf("observed %d trees, the old server %d", len(got), len(want.Trees))
	}
	for k, g := range got {
		var w any
		d := json.NewDecoder(bytes.NewReader(want.Trees[k]))
		d.UseNumber()
		if err := d.Decode(&w); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if diff := subsetDiff(k, w, g); diff != "" {
			t.Errorf("changed by the upgrade: %s", diff)
		}
	}

	// dave holds 70 sets split at par: they merge at par, 1 each.
	dave := sessionCred(c.login("dave", ""))
	before := c.me(dave).Agent.Balance
	mg := c.splitMerge(dave, want.Markets["main"], "merge", "70")
	if mg.Cost != money.Units(70) || mg.BalanceAfter != before+money.Units(70) || mg.YesShares != 0 || mg.NoShares != 0 {
		t.Fatalf("merge of 70 par sets: %+v, want 70 paid at par from %s", mg, before)
	}
	// A new split goes on the curve: above par.
	sp := c.splitMerge(dave, want.Markets["main"], "split", "10")
	if sp.Cost <= money.Units(10) {
		t.Fatalf("split of 10 after the upgrade: %+v, want a cost above par", sp)
	}
	// A clean stop (final snapshot, the checker at its recovery) works.
	if code := p.terminate(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}
