package snapshot_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"marketd/core"
	"marketd/snapshot"
)

// history is the canonical state after every acknowledged record that a
// workload step ended on. Boundaries inside a step of several records are
// absent.
type history map[uint64]*core.Record

func runRecorded(t *testing.T, dir string, seed uint64, steps int, snapshotEvery int) (history, *node) {
	t.Helper()
	c := newClock(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	n := start(t, dir, c)
	h := history{0: core.NewState().Canonical()}
	w := newWorkload(t, n, seed)
	h[n.log.LastSeq()] = n.e.State().Canonical()
	for i := range steps {
		if w.step() {
			h[n.log.LastSeq()] = n.e.State().Canonical()
		}
		if snapshotEvery > 0 && w.r.IntN(snapshotEvery) == 0 {
			if _, err := n.snaps.Take(w.ctx); err != nil {
				t.Fatalf("step %d: snapshot: %v", i, err)
			}
		}
	}
	return h, n
}

// frameEnds returns the end offset of every tidwall entry in a segment file
// (uvarint length + data), in order.
func frameEnds(t *testing.T, b []byte) []int {
	var ends []int
	for off := 0; off < len(b); {
		n, k := binary.Uvarint(b[off:])
		if k <= 0 || off+k+int(n) > len(b) {
			t.Fatalf("segment does not parse at %d", off)
		}
		off += k + int(n)
		ends = append(ends, off)
	}
	return ends
}

// lastSegment returns the path of the newest segment file of a log dir.
func lastSegment(t *testing.T, dir string) (string, uint64) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	for _, e := range ents {
		if len(e.Name()) == 20 && !strings.Contains(e.Name(), ".") {
			name = e.Name()
		}
	}
	if name == "" {
		t.Fatalf("no segment in %s", dir)
	}
	var first uint64
	fmt.Sscanf(name, "%d", &first)
	return filepath.Join(dir, name), first
}

// cutter recovers copies of a data directory whose last log segment is cut
// at chosen offsets. It copies the directory once and rewrites only the
// segment for each cut, since recovery changes nothing else but the torn
// tail's copy aside, which it removes.
type cutter struct {
	t    *testing.T
	work string
	seg  string
	orig []byte
}

func newCutter(t *testing.T, dir string) *cutter {
	work := t.TempDir()
	if err := os.CopyFS(work, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	seg, _ := lastSegment(t, walDir(work))
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	return &cutter{t: t, work: work, seg: seg, orig: b}
}

// recoverAt recovers with the segment cut at offset and returns the
// recovered state, or the error when recovery refused.
func (c *cutter) recoverAt(offset int) (*core.Record, error) {
	c.t.Helper()
	if err := os.WriteFile(c.seg, c.orig[:offset], 0o640); err != nil {
		c.t.Fatal(err)
	}
	broken, _ := filepath.Glob(filepath.Join(walDir(c.work), "*.broken"))
	for _, b := range broken {
		if err := os.Remove(b); err != nil {
			c.t.Fatal(err)
		}
	}
	st, log, _, err := recoverDir(c.work)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	return st.Canonical(), nil
}

func requireState(t *testing.T, what string, got, want *core.Record) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: recovered state differs from the acknowledged one\n got %d accounts %d markets %+v\nwant %d accounts %d markets %+v",
			what, len(got.Accounts), len(got.Markets), got.Supply, len(want.Accounts), len(want.Markets), want.Supply)
	}
}

// TestRecoverAtEveryCut runs a random workload on the real log, then cuts
// the log at every record boundary and in the middle of every record: the
// recovered state must equal the state acknowledged at the boundary (a torn
// record is cut away with everything after it).
func TestRecoverAtEveryCut(t *testing.T) {
	for _, seed := range cutSeeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			dir := t.TempDir()
			hist, n := runRecorded(t, dir, seed, 400, 0)
			n.stop()
			c := newCutter(t, dir)
			_, first := lastSegment(t, walDir(dir))
			b := c.orig
			ends := frameEnds(t, b)
			if first != 1 || len(ends) < 100 {
				t.Fatalf("log of %d records from %d: workload too small", len(ends), first)
			}
			checked := 0
			prevEnd := 0
			for i, end := range ends {
				seq := uint64(i) // records before the cut
				for _, cut := range []int{prevEnd, prevEnd + 1 + rng.IntN(end-prevEnd-1)} {
					got, err := c.recoverAt(cut)
					if err != nil {
						t.Fatalf("cut at %d (inside record %d): %v", cut, seq+1, err)
					}
					if want, ok := hist[seq]; ok {
						requireState(t, fmt.Sprintf("cut at %d, record %d", cut, seq+1), got, want)
						checked++
					}
				}
				prevEnd = end
			}
			got, err := c.recoverAt(len(b))
			if err != nil {
				t.Fatal(err)
			}
			requireState(t, "whole log", got, hist[uint64(len(ends))])
			if checked < len(ends) {
				t.Fatalf("only %d cuts compared for %d records", checked, len(ends))
			}
		})
	}
}

// TestRecoverWithSnapshots takes snapshots at random points of the
// workload, which also trims the log, then cuts the log at every boundary
// and inside every record. At or past the newest snapshot's reach
// (max(From, Through)) the state must be the acknowledged one; before it
// the log has lost records the snapshot was published on, and recovery
// must refuse rather than give another state.
func TestRecoverWithSnapshots(t *testing.T) {
	for _, seed := range snapshotSeeds {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			dir := t.TempDir()
			hist, n := runRecorded(t, dir, seed, 200, 15)
			newest, ok := n.snaps.Last()
			n.stop()
			if !ok {
				t.Fatal("no snapshot was taken")
			}
			_, first := lastSegment(t, walDir(dir))
			if first == 1 {
				t.Fatalf("the log was never trimmed behind the snapshots")
			}
			c := newCutter(t, dir)
			b := c.orig
			ends := frameEnds(t, b)
			reach := max(newest.From, newest.Through)
			exact, refused := 0, 0
			prevEnd := 0
			for i, end := range ends {
				seq := first + uint64(i) - 1 // records kept before the cut
				for _, cut := range []int{prevEnd, prevEnd + (end-prevEnd)/2} {
					got, err := c.recoverAt(cut)
					want, known := hist[seq]
					switch {
					case seq < reach && err == nil:
						t.Fatalf("cut before record %d, below the snapshot's reach %d: recovery succeeded", seq+1, reach)
					case seq < reach:
						refused++
					case err != nil:
						t.Fatalf("cut before record %d (snapshot reach %d): %v", seq+1, reach, err)
					case known:
						requireState(t, fmt.Sprintf("cut before record %d", seq+1), got, want)
						exact++
					}
				}
				prevEnd = end
			}
			got, err := c.recoverAt(len(b))
			if err != nil {
				t.Fatal(err)
			}
			requireState(t, "whole log", got, hist[first+uint64(len(ends))-1])
			t.Logf("%d cuts recovered exactly, %d refused below the reach %d", exact+1, refused, reach)
		})
	}
}

// TestRecoverFallsBackFromDamagedSnapshot damages the newest snapshot: the
// previous one plus the longer log must give the same final state.
func TestRecoverFallsBackFromDamagedSnapshot(t *testing.T) {
	dir := t.TempDir()
	hist, last, newest := damageNewestSnapshot(t, dir)
	st, log, rec, err := recoverDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	requireFallback(t, "recovery", rec, newest)
	requireState(t, "after fallback", st.Canonical(), hist[last])
}

// damageNewestSnapshot runs a recorded workload in dir that takes several
// snapshots, stops it, and flips a byte in the middle of the newest
// snapshot. It returns the history, the last record's sequence number and
// the damaged snapshot's header.
func damageNewestSnapshot(t *testing.T, dir string) (history, uint64, snapshot.Header) {
	t.Helper()
	hist, n := runRecorded(t, dir, 6, 150, 10)
	last := n.log.LastSeq()
	newest, _ := n.snaps.Last()
	n.stop()
	name := filepath.Join(snapDir(dir), fmt.Sprintf("snapshot-%020d.snap", newest.From))
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(name, b, 0o640); err != nil {
		t.Fatal(err)
	}
	return hist, last, newest
}

// requireFallback fails t unless rec passed over the damaged snapshot
// newest, and only it, for an older one.
func requireFallback(t *testing.T, what string, rec snapshot.Recovered, newest snapshot.Header) {
	t.Helper()
	if len(rec.Skipped) != 1 || rec.Snapshot == nil || rec.Snapshot.From >= newest.From {
		t.Fatalf("%s did not fall back to the previous snapshot: %+v", what, rec)
	}
}

// TestRecoverRefusesCorruptLog flips a byte in a record in the middle of
// the log: recovery must stop with an error, not drop data.
func TestRecoverRefusesCorruptLog(t *testing.T) {
	dir := t.TempDir()
	_, n := runRecorded(t, dir, 7, 80, 0)
	n.stop()
	seg, _ := lastSegment(t, walDir(dir))
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	ends := frameEnds(t, b)
	mid := ends[len(ends)/2] - 3
	b[mid] ^= 0x01
	if err := os.WriteFile(seg, b, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, log, _, err := recoverDir(dir); err == nil {
		log.Close()
		t.Fatal("recovery accepted a log with a corrupt record in the middle")
	}
}
