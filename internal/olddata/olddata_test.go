package olddata_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"marketd/core"
	"marketd/internal/olddata"
	"marketd/snapshot"
	"marketd/wal"
)

// e00a1d2Kinds are the record kinds of the build that wrote E00a1d2: its
// log holds every one of them but the image, which its snapshot holds.
var e00a1d2Kinds = []core.Kind{
	core.KindAccountCreated, core.KindMarketCreated, core.KindTrade, core.KindSplit, core.KindMerge,
	core.KindSettle, core.KindMarketClosed, core.KindReferrerSet, core.KindKeyCreated, core.KindKeyRevoked,
	core.KindSessionCreated, core.KindSessionRevoked, core.KindKeyUsage, core.KindProfile,
	core.KindNotesRead, core.KindDeposit, core.KindWithdrawal, core.KindOracleProposed,
	core.KindOracleChallenge, core.KindOracleVote, core.KindOracleDeadline,
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openLog(t *testing.T, dir string) *wal.Log {
	t.Helper()
	l, err := wal.Open(filepath.Join(dir, "wal"), wal.Options{Logger: quiet})
	if err != nil {
		t.Fatalf("open the log of %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("close the log: %v", err)
		}
	})
	return l
}

// TestEveryRecordDecodes decodes every record of the log and every chunk of
// the snapshot, and checks that together they hold every kind.
func TestEveryRecordDecodes(t *testing.T) {
	dir := olddata.Copy(t, olddata.E00a1d2)
	l := openLog(t, dir)
	seen := make(map[core.Kind]int)
	var records uint64
	err := l.Replay(l.FirstSeq(), func(seq uint64, rec *core.Record) error {
		records++
		seen[rec.Kind]++
		return nil
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if want := l.LastSeq() - l.FirstSeq() + 1; records != want || l.FirstSeq() != 1 {
		t.Fatalf("replayed %d records from %d, want %d from 1", records, l.FirstSeq(), want)
	}
	for _, k := range e00a1d2Kinds {
		if seen[k] == 0 {
			t.Errorf("no record of kind %d in the log (kinds seen: %v)", k, seen)
		}
	}

	snaps, err := filepath.Glob(filepath.Join(dir, "snapshots", "*.snap"))
	if err != nil || len(snaps) != 1 {
		t.Fatalf("snapshots %v, %v; want one", snaps, err)
	}
	b, err := os.ReadFile(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	images := 0
	h, err := snapshot.Decode(b, func(rec *core.Record) error {
		if rec.Kind != core.KindImage {
			return fmt.Errorf("chunk of kind %d", rec.Kind)
		}
		images++
		return nil
	})
	if err != nil || images == 0 || h.Through < h.From || h.Through > l.LastSeq() {
		t.Fatalf("snapshot %s: header %+v, %d images, %v", snaps[0], h, images, err)
	}
	t.Logf("log: %d records (kinds %v); snapshot through %d: %d image records", records, seen, h.Through, images)
}

// TestRecoversTheSameState recovers the directory (snapshot, then the log
// after it), runs the invariant checker, and compares the state with the
// one the writing build recovered: every field that build had holds the
// same value (fields added since may hold anything). The log alone, replayed
// from its first record, must give the same state as the snapshot and the
// log.
func TestRecoversTheSameState(t *testing.T) {
	dir := olddata.Copy(t, olddata.E00a1d2)
	l := openLog(t, dir)
	st, rec, err := snapshot.Recover(nil, filepath.Join(dir, "snapshots"), l, quiet)
	if err != nil {
		t.Fatalf("recover: %v", err)
	}
	if rec.Snapshot == nil || rec.Replayed == 0 {
		t.Fatalf("recovered %+v, want a snapshot and records after it", rec)
	}
	if err := st.Check(); err != nil {
		t.Fatalf("invariants after recovery: %v", err)
	}

	fromLog := core.NewState()
	if err := l.Replay(l.FirstSeq(), fromLog.Apply); err != nil {
		t.Fatalf("replay the whole log: %v", err)
	}
	if err := fromLog.Check(); err != nil {
		t.Fatalf("invariants after replaying the whole log: %v", err)
	}
	if got, want := st.Canonical(), fromLog.Canonical(); !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot and log recover\n%+v\nthe log alone\n%+v", got, want)
	}

	stored, err := olddata.Canonical(olddata.E00a1d2)
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, err := json.Marshal(st.Canonical())
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(gotJSON, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(stored, &want); err != nil {
		t.Fatal(err)
	}
	for _, d := range missing("state", got, want, nil) {
		t.Error(d)
	}
}

// missing lists where got lacks a value of want: every key of a want object
// must be in got with a matching value; arrays match item by item.
func missing(path string, got, want any, out []string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return append(out, fmt.Sprintf("%s: got %v, want an object", path, got))
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing, want %v", path, k, wv))
				continue
			}
			out = missing(path+"."+k, gv, wv, out)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return append(out, fmt.Sprintf("%s: got %v, want %d items %v", path, got, len(w), w))
		}
		for i := range w {
			out = missing(fmt.Sprintf("%s[%d]", path, i), g[i], w[i], out)
		}
	default:
		if !reflect.DeepEqual(got, want) {
			out = append(out, fmt.Sprintf("%s: got %v, want %v", path, got, want))
		}
	}
	return out
}
