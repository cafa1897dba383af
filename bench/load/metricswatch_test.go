package load

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// snapshotBody is the snapshot figures of a /metrics body as marketd
// writes it.
const snapshotBody = `# HELP marketd_snapshots_total Snapshots written since start.
# TYPE marketd_snapshots_total counter
marketd_snapshots_total 3
# HELP marketd_snapshot_age_seconds Seconds since the newest good snapshot was written.
# TYPE marketd_snapshot_age_seconds gauge
marketd_snapshot_age_seconds 2.5
# HELP marketd_snapshot_duration_seconds Time the last snapshot written took.
# TYPE marketd_snapshot_duration_seconds gauge
marketd_snapshot_duration_seconds 1.25
`

// gcBody is go_gc_duration_seconds as client_golang's Go collector writes
// it, after 17 collections.
const gcBody = `# HELP go_gc_duration_seconds A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0"} 2.1e-05
go_gc_duration_seconds{quantile="0.25"} 3.4e-05
go_gc_duration_seconds{quantile="0.5"} 4.2e-05
go_gc_duration_seconds{quantile="0.75"} 6.1e-05
go_gc_duration_seconds{quantile="1"} 0.000412
go_gc_duration_seconds_sum 0.00123
go_gc_duration_seconds_count 17
`

// TestReadMetrics reads the snapshot figures and the collections' count
// out of /metrics bodies with and without them.
func TestReadMetrics(t *testing.T) {
	noDuration := snapshotBody[:strings.Index(snapshotBody, "# HELP marketd_snapshot_duration")]
	for _, c := range []struct {
		name        string
		body        string
		wantErr     bool // the body is not the text format
		snapshotErr bool // a snapshot figure is missing
		collections int64
	}{
		{name: "snapshots and collections", body: snapshotBody + gcBody, collections: 17},
		{name: "collections first", body: gcBody + snapshotBody, collections: 17},
		{name: "no collections", body: snapshotBody, collections: -1},
		{name: "no snapshot duration", body: noDuration + gcBody, snapshotErr: true, collections: 17},
		{name: "collections only", body: gcBody, snapshotErr: true, collections: 17},
		{name: "not metrics", body: "marketd_snapshots_total three\n", wantErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := readMetrics([]byte(c.body))
			if (err != nil) != c.wantErr {
				t.Fatalf("readMetrics(%q): error %v, want one: %v", c.body, err, c.wantErr)
			}
			if err != nil {
				return
			}
			if m.collections != c.collections || (m.snapshotsErr != nil) != c.snapshotErr {
				t.Fatalf("readMetrics(%q) = collections %d, snapshot error %v; want %d, an error: %v",
					c.body, m.collections, m.snapshotsErr, c.collections, c.snapshotErr)
			}
			if !c.snapshotErr && (m.taken != 3 || m.snapshotAgeSeconds != 2.5 || m.snapshotTookSeconds != 1.25) {
				t.Fatalf("readMetrics(%q) = snapshots %v, age %v, took %v; want 3, 2.5, 1.25",
					c.body, m.taken, m.snapshotAgeSeconds, m.snapshotTookSeconds)
			}
		})
	}
}

// TestNoteCollections feeds a watch the collections' counts of successive
// scrapes, a second apart, and checks the windows it keeps.
func TestNoteCollections(t *testing.T) {
	base := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	sentAt := func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }
	// Each scrape i is sent at second i and answered 10 ms later.
	window := func(from, to, ended int) Window {
		return Window{Start: sentAt(from), End: sentAt(to).Add(10 * time.Millisecond), Ended: ended}
	}
	many := make([]int64, maxWatchedCollections+3)
	for i := range many {
		many[i] = int64(i)
	}
	for _, c := range []struct {
		name   string
		counts []int64 // -1: the scrape had no count
		want   []Window
	}{
		{name: "first scrape only", counts: []int64{5}},
		{name: "grows by 0", counts: []int64{5, 5, 5}},
		{name: "grows by 1", counts: []int64{5, 6}, want: []Window{window(0, 1, 1)}},
		{name: "grows by 3", counts: []int64{5, 5, 8}, want: []Window{window(1, 2, 3)}},
		{name: "grows twice", counts: []int64{5, 6, 6, 9}, want: []Window{window(0, 1, 1), window(2, 3, 3)}},
		{name: "no metric", counts: []int64{-1, -1, -1}},
		{name: "a scrape without it", counts: []int64{5, -1, 7}, want: []Window{window(0, 2, 2)}},
		{name: "count falls", counts: []int64{5, 2, 3}, want: []Window{window(1, 2, 1)}},
		{name: "cap", counts: many},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newMetricsWatch("127.0.0.1:1", time.Second)
			w.mu.Lock()
			for i, n := range c.counts {
				w.noteCollections(n, sentAt(i), sentAt(i).Add(10*time.Millisecond))
			}
			w.mu.Unlock()
			got := w.Collections()
			if c.name == "cap" {
				if len(got) != maxWatchedCollections || got[len(got)-1] != window(maxWatchedCollections-1, maxWatchedCollections, 1) {
					t.Fatalf("%d counts, each one more: %d windows, the last %+v; want %d, the last ending at scrape %d",
						len(c.counts), len(got), got[len(got)-1], maxWatchedCollections, maxWatchedCollections)
				}
				return
			}
			if len(got) != len(c.want) {
				t.Fatalf("counts %v: windows %+v, want %+v", c.counts, got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("counts %v: windows %+v, want %+v", c.counts, got, c.want)
				}
			}
		})
	}
}

// TestWatchAsksForItsFamilies scrapes client_golang's handler, as marketd
// serves /metrics, with a watch's query: the answer holds the four
// families the watch reads and no other, and the watch reads them.
func TestWatchAsksForItsFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	taken := prometheus.NewCounter(prometheus.CounterOpts{Name: snapshotsMetric, Help: "Snapshots."})
	taken.Add(3)
	reg.MustRegister(collectors.NewGoCollector(), taken,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: snapshotAgeMetric, Help: "Age."}, func() float64 { return 2.5 }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: snapshotTookMetric, Help: "Took."}, func() float64 { return 1.25 }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "marketd_other", Help: "Not read."}, func() float64 { return 1 }))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	w := newMetricsWatch(strings.TrimPrefix(srv.URL, "http://"), time.Hour)

	resp, err := http.Get(w.url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for name := range fams {
		got = append(got, name)
	}
	slices.Sort(got)
	want := []string{gcMetric, snapshotTookMetric, snapshotAgeMetric, snapshotsMetric}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("GET %s: families %v, want %v", w.url, got, want)
	}

	w.scrape()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.taken != 3 || w.collected < 0 {
		t.Errorf("scrape: error %v, snapshots %v, collections %d; want none, 3, a count", w.err, w.taken, w.collected)
	}
}
