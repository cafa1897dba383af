package snapshot

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// trimLog is a Log that records the truncations asked of it.
type trimLog struct {
	first  uint64
	truncs []uint64
}

func (l *trimLog) WaitDurable(context.Context, uint64) error { return nil }
func (l *trimLog) Durable() uint64                           { return 0 }
func (l *trimLog) FirstSeq() uint64                          { return l.first }
func (l *trimLog) TruncateFront(_ context.Context, seq uint64) error {
	l.truncs = append(l.truncs, seq)
	l.first = max(l.first, seq)
	return nil
}

// TestTrimLogSteps checks the log's trimming: at once when not stepped;
// stepped, in steps of trimStepRecords from the first record kept, the
// last one ending exactly at the target.
func TestTrimLogSteps(t *testing.T) {
	cases := []struct {
		first, to uint64
		stepped   bool
		want      []uint64
	}{
		{1, 100_000, false, []uint64{100_000}},
		{1, 100, true, []uint64{100}},
		{1, 1 + 2*trimStepRecords, true, []uint64{1 + trimStepRecords, 1 + 2*trimStepRecords}},
		{5, 5 + 2*trimStepRecords + 3, true, []uint64{5 + trimStepRecords, 5 + 2*trimStepRecords, 5 + 2*trimStepRecords + 3}},
		{500, 400, true, []uint64{400}}, // nothing to trim: one call, a no-op for the log
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d-%d-%v", c.first, c.to, c.stepped), func(t *testing.T) {
			l := &trimLog{first: c.first}
			m := &Manager{log: l}
			if _, _, err := m.trimLog(context.Background(), c.to, c.stepped); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(l.truncs, c.want) {
				t.Fatalf("truncations %v, want %v", l.truncs, c.want)
			}
		})
	}
}

// segLog is a trimLog that lists its segments' starts.
type segLog struct {
	trimLog
	starts []uint64
}

func (l *segLog) SegmentStarts() ([]uint64, error) { return l.starts, nil }

// TestSegmentCuts checks the stepped trim of a log that lists its
// segments: every cut the last record of a segment, never past the
// target, each step spanning up to trimStepRecords records or one segment.
func TestSegmentCuts(t *testing.T) {
	const s = trimStepRecords
	cases := []struct {
		name      string
		first, to uint64
		starts    []uint64
		want      []uint64
	}{
		{"one segment", 1, 500, []uint64{1}, nil},
		{"target inside the second segment", 1, 500, []uint64{1, 300}, []uint64{299}},
		{"target at a segment's end", 1, 299, []uint64{1, 300, 600}, []uint64{299}},
		{"small segments grouped", 1, 3 * s, []uint64{1, s / 2, s, 3 * s / 2, 2 * s, 5 * s / 2}, []uint64{s - 1, 2*s - 1, 5*s/2 - 1}},
		{"large segments one by one", 1, 10 * s, []uint64{1, 2 * s, 4 * s, 6 * s}, []uint64{2*s - 1, 4*s - 1, 6*s - 1}},
		{"from a one-record segment", 299, 1000, []uint64{299, 300, 700}, []uint64{699}},
		{"first already past", 650, 1000, []uint64{600, 700}, []uint64{699}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := segmentCuts(c.first, c.to, c.starts)
			if !slices.Equal(got, c.want) {
				t.Fatalf("segmentCuts(%d, %d, %v) = %v, want %v", c.first, c.to, c.starts, got, c.want)
			}
			l := &segLog{trimLog: trimLog{first: c.first}, starts: c.starts}
			m := &Manager{log: l}
			if _, _, err := m.trimLog(context.Background(), c.to, true); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(l.truncs, c.want) {
				t.Fatalf("truncations %v, want %v", l.truncs, c.want)
			}
		})
	}
}
