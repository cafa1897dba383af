package snapshot

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
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

// TestTrimLog checks the log's trimming by a log that does not list its
// segments: at once to the target, paced or not; paced and with nothing to
// drop, not at all.
func TestTrimLog(t *testing.T) {
	cases := []struct {
		first, to uint64
		paced     bool
		want      []uint64
	}{
		{1, 100_000, false, []uint64{100_000}},
		{1, 100_000, true, []uint64{100_000}},
		{500, 400, false, []uint64{400}}, // a no-op for the log
		{500, 400, true, nil},
		{500, 500, true, nil},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d-%d-%v", c.first, c.to, c.paced), func(t *testing.T) {
			l := &trimLog{first: c.first}
			m := &Manager{log: l}
			if _, err := m.trimLog(context.Background(), c.to, c.paced); err != nil {
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

// TestSegmentEnd checks the paced trim of a log that lists its segments:
// one truncation, whatever the number of segments it drops, to the last
// record of the last segment that ends at or before the target, and none
// when no segment ends there.
func TestSegmentEnd(t *testing.T) {
	const s = 8192
	cases := []struct {
		name      string
		first, to uint64
		starts    []uint64
		want      []uint64
	}{
		{"one segment", 1, 500, []uint64{1}, nil},
		{"target inside the second segment", 1, 500, []uint64{1, 300}, []uint64{299}},
		{"target at a segment's end", 1, 299, []uint64{1, 300, 600}, []uint64{299}},
		{"many small segments at once", 1, 3 * s, []uint64{1, s / 2, s, 3 * s / 2, 2 * s, 5 * s / 2}, []uint64{5*s/2 - 1}},
		{"many large segments at once", 1, 10 * s, []uint64{1, 2 * s, 4 * s, 6 * s}, []uint64{6*s - 1}},
		{"from a one-record segment", 299, 1000, []uint64{299, 300, 700}, []uint64{699}},
		{"first already past", 650, 1000, []uint64{600, 700}, []uint64{699}},
		{"first at the only end", 699, 1000, []uint64{600, 700}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := &segLog{trimLog: trimLog{first: c.first}, starts: c.starts}
			m := &Manager{log: l}
			if _, err := m.trimLog(context.Background(), c.to, true); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(l.truncs, c.want) {
				t.Fatalf("truncations %v, want %v", l.truncs, c.want)
			}
		})
	}
}

// restLog is a segLog that frees a truncation's files with rests
// (trimmer), as *wal.Log does.
type restLog struct {
	segLog
	rests []time.Duration
}

func (l *restLog) TrimFront(ctx context.Context, seq uint64, rest time.Duration) (time.Duration, error) {
	l.rests = append(l.rests, rest)
	return 3 * time.Millisecond, l.TruncateFront(ctx, seq)
}

// TestTrimLogRests checks that a paced trim goes through TrimFront with
// trimUnlinkRest and reports the writer's time, and that a trim at once
// (a snapshot taken by Take) does not rest.
func TestTrimLogRests(t *testing.T) {
	l := &restLog{segLog: segLog{trimLog: trimLog{first: 1}, starts: []uint64{1, 300, 600}}}
	m := &Manager{log: l}
	held, err := m.trimLog(context.Background(), 650, true)
	if err != nil {
		t.Fatal(err)
	}
	if held != 3*time.Millisecond || !slices.Equal(l.rests, []time.Duration{trimUnlinkRest}) || !slices.Equal(l.truncs, []uint64{599}) {
		t.Fatalf("paced: held %v, rests %v, truncations %v; want 3ms, [%v], [599]", held, l.rests, l.truncs, trimUnlinkRest)
	}
	if _, err := m.trimLog(context.Background(), 640, false); err != nil {
		t.Fatal(err)
	}
	if len(l.rests) != 1 || !slices.Equal(l.truncs, []uint64{599, 640}) {
		t.Fatalf("at once: rests %v, truncations %v; want no more rests, [599 640]", l.rests, l.truncs)
	}
}
