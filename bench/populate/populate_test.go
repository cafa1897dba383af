package populate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"marketd/bench/populate"
	"marketd/internal/fstype"
	"marketd/snapshot"
	"marketd/wal"
)

// TestAccounts fills a directory, then recovers it as marketd does at
// start: every account comes from the snapshot, nothing is replayed, and
// the state's invariants hold.
func TestAccounts(t *testing.T) {
	const n = 2_000
	dir := filepath.Join(fstype.DiskTempDir(t), "data")
	res, err := populate.Accounts(context.Background(), populate.Options{Dir: dir, Accounts: n})
	if err != nil {
		t.Fatal(err)
	}
	if res.Accounts != n || res.Snapshot.Chunks == 0 || res.SnapshotBytes == 0 {
		t.Fatalf("result %+v, want %d accounts in a snapshot", res, n)
	}
	log, err := wal.Open(filepath.Join(dir, "wal"), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := log.Close(); err != nil {
			t.Error(err)
		}
	}()
	st, rec, err := snapshot.Recover(nil, filepath.Join(dir, "snapshots"), log, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Snapshot == nil || rec.Snapshot.From != res.Snapshot.From || rec.Replayed > 1 {
		t.Fatalf("recovered from %+v replaying %d records, want the snapshot at %d and at most one record", rec.Snapshot, rec.Replayed, res.Snapshot.From)
	}
	got := 0
	for _, a := range st.Canonical().Accounts {
		if a.Info != nil && strings.HasPrefix(a.Info.Name, "pop") {
			got++
		}
	}
	if got != n {
		t.Fatalf("recovered %d accounts named pop..., want %d", got, n)
	}
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestAccountsRefuses checks the bounds and that a directory holding
// anything is left alone.
func TestAccountsRefuses(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		o        populate.Options
		notEmpty bool
	}{
		{"no accounts", populate.Options{Dir: filepath.Join(dir, "new"), Accounts: 0}, false},
		{"too many", populate.Options{Dir: filepath.Join(dir, "new"), Accounts: populate.MaxAccounts + 1}, false},
		{"not empty", populate.Options{Dir: dir, Accounts: 10}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := populate.Accounts(context.Background(), c.o)
			if err == nil || errors.Is(err, populate.ErrNotEmpty) != c.notEmpty {
				t.Fatalf("Accounts(%+v) = %v, want an error (ErrNotEmpty: %v)", c.o, err, c.notEmpty)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused call created its directory: %v", err)
	}
}
