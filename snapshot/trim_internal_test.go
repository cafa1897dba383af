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
