// Package olddata keeps data directories written by earlier builds of
// marketd, and copies them for the tests that show a new build still
// recovers them unchanged (or refuses them with a clear error, where
// docs/API.md allows a refusal).
//
// Each directory NAME under testdata is named for the commit that wrote
// it and holds wal/ (log segments) and snapshots/, as -data does;
// testdata/NAME.json is the canonical state (core.State.Canonical, encoded
// by encoding/json) that the writing build recovered from it.
// testdata/gen-NAME holds the two programs that wrote them; they build only
// in a worktree of that commit:
//
//	git worktree add /tmp/old NAME
//	cp -r testdata/gen-NAME/* /tmp/old/cmd/
//	cd /tmp/old && go run ./cmd/write DIR && go run ./cmd/dump DIR > NAME.json
package olddata

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"testing"
)

// E00a1d2 is the data directory written by commit e00a1d2, the last build
// of log frame format 2 and snapshot magic MKTSNAP2, with the engine's
// RecordingCustody and a manual clock starting 2026-11-20 12:00 UTC. Its
// log, in two segments (16 KiB segment size), holds every record kind of
// that build: eight accounts besides the house (admin; alice, bob, carol, dave with 1,000 KP;
// voter1-3 with 100 KP; password "old-data-password" for each), a referral
// by code (bob) and one at registration (carol), four markets with trades
// in KP and USDC, splits and a merge, API keys created, used, rotated and
// revoked (literals svc_live_ and 31 zeros then 1, 2 or 3), sessions
// created and revoked (hashes of "session-alice" and "session-bob"),
// settings, persona, terms and wallets, deposits and withdrawals, notes
// marked read, a settlement by the admin, every market's close, an
// unchallenged proposal and a challenged one decided by three votes. A
// snapshot taken at seq 50 is followed by 15 more records (65 in all).
const E00a1d2 = "e00a1d2"

//go:embed testdata/e00a1d2 testdata/e00a1d2.json
var files embed.FS

// Copy copies the data directory name into a new temporary directory of t
// and returns its path. Recovery may repair and write files; the stored
// directory stays as it is.
func Copy(t testing.TB, name string) string {
	t.Helper()
	sub, err := fs.Sub(files, "testdata/"+name)
	if err == nil {
		_, err = fs.Stat(sub, ".")
	}
	if err != nil {
		t.Fatalf("olddata: no data directory %q: %v", name, err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, sub); err != nil {
		t.Fatalf("olddata: copy %s: %v", name, err)
	}
	return dir
}

// Canonical returns the JSON of the canonical state that the build which
// wrote the data directory name recovered from it.
func Canonical(name string) ([]byte, error) {
	b, err := files.ReadFile("testdata/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("olddata: canonical state of %s: %w", name, err)
	}
	return b, nil
}
