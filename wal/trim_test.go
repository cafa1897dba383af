package wal

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// trimLinks returns the NAME.TRIM files in dir.
func trimLinks(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), trimLinkSuffix) {
			links = append(links, e.Name())
		}
	}
	return links
}

// TestTrimFront checks a truncation of many segments at once as a periodic
// snapshot asks it: the dropped files are gone once TrimFront returns,
// their second names included, freed with the rest between two of them;
// the writer's time is reported; the log replays whole from the new front
// across a reopen.
func TestTrimFront(t *testing.T) {
	dir, opts, l, starts := startSegmentedLog(t)
	if len(starts) < 6 {
		t.Fatalf("%d segments, want at least 6", len(starts))
	}
	cut := starts[5] - 1 // the last record of the fifth segment: five files dropped
	const rest = 5 * time.Millisecond
	began := time.Now()
	held, err := l.TrimFront(t.Context(), cut, rest)
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	if held <= 0 || held > took {
		t.Fatalf("held %v, want within (0, %v]", held, took)
	}
	if took < 4*rest {
		t.Fatalf("took %v, want at least %v: five files freed %v apart", took, 4*rest, rest)
	}
	if links := trimLinks(t, dir); len(links) != 0 {
		t.Fatalf("second names left: %v", links)
	}
	if names := segmentNames(t, dir); names[0] != segmentName(cut) {
		t.Fatalf("first segment %s, want %s", names[0], segmentName(cut))
	}
	// Commits go on after it.
	writeRecords(t, l, 3)
	mustClose(t, l)
	l = mustOpen(t, dir, opts)
	checkReplay(t, l, cut, 103)
	mustClose(t, l)
}

// TestTrimFrontRefused checks that a truncation the log refuses (past its
// end) or that drops nothing leaves every segment file as it was and no
// second name behind.
func TestTrimFrontRefused(t *testing.T) {
	dir, opts, l, _ := startSegmentedLog(t)
	before := segmentNames(t, dir)
	if _, err := l.TrimFront(t.Context(), l.LastSeq()+2, time.Millisecond); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("past the end: err %v, want ErrOutOfRange", err)
	}
	if _, err := l.TrimFront(t.Context(), l.FirstSeq(), time.Millisecond); err != nil {
		t.Fatalf("at the front: %v", err)
	}
	if links := trimLinks(t, dir); len(links) != 0 {
		t.Fatalf("second names left: %v", links)
	}
	if after := segmentNames(t, dir); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("segments %v, want %v", after, before)
	}
	mustClose(t, l)
	l = mustOpen(t, dir, opts)
	checkReplay(t, l, 1, 100)
	mustClose(t, l)
}
