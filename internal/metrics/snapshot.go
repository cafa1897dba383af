package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"marketd/snapshot"
)

// SnapshotSource is what the snapshot collector reads; *snapshot.Manager
// has it.
type SnapshotSource interface {
	Stats() snapshot.Stats
	Last() (snapshot.Header, bool)
}

// snapshotCollector reads the snapshot manager's counters when scraped.
type snapshotCollector struct {
	src                                       SnapshotSource
	now                                       func() time.Time
	started                                   time.Time
	taken, failed, took, size, age, from, thr *prometheus.Desc
}

// RegisterSnapshots registers on reg the collector of src's counters.
// started is when the process started: the age of the newest snapshot
// counts from it while there is none, so that a snapshot never taken
// raises the same alert as one taken too long ago.
func RegisterSnapshots(reg prometheus.Registerer, src SnapshotSource, started time.Time, now func() time.Time) {
	reg.MustRegister(&snapshotCollector{
		src: src, now: now, started: started,
		taken:  prometheus.NewDesc("marketd_snapshots_total", "Snapshots written since start.", nil, nil),
		failed: prometheus.NewDesc("marketd_snapshot_failures_total", "Snapshots that failed since start (the log keeps everything; the next turn retries).", nil, nil),
		took:   prometheus.NewDesc("marketd_snapshot_duration_seconds", "Time the last snapshot written took (capture, write, fsyncs, rename, and the rests of a paced snapshot).", nil, nil),
		size:   prometheus.NewDesc("marketd_snapshot_size_bytes", "Size of the last snapshot written.", nil, nil),
		age: prometheus.NewDesc("marketd_snapshot_age_seconds",
			"Seconds since the newest good snapshot was written (since process start while there is none).", nil, nil),
		from: prometheus.NewDesc("marketd_snapshot_from_seq", "Log position of the newest snapshot: replay starts after it.", nil, nil),
		thr:  prometheus.NewDesc("marketd_snapshot_through_seq", "Highest sequence number in the newest snapshot.", nil, nil),
	})
}

// Describe implements prometheus.Collector.
func (c *snapshotCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.taken, c.failed, c.took, c.size, c.age, c.from, c.thr} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *snapshotCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Stats()
	ch <- prometheus.MustNewConstMetric(c.taken, prometheus.CounterValue, float64(st.Taken))
	ch <- prometheus.MustNewConstMetric(c.failed, prometheus.CounterValue, float64(st.Failed))
	ch <- prometheus.MustNewConstMetric(c.took, prometheus.GaugeValue, st.LastTook.Seconds())
	ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(st.LastSizeBytes))
	since := c.started
	if !st.LastGoodAt.IsZero() {
		since = st.LastGoodAt
	}
	ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, max(0, c.now().Sub(since).Seconds()))
	h, _ := c.src.Last()
	ch <- prometheus.MustNewConstMetric(c.from, prometheus.GaugeValue, float64(h.From))
	ch <- prometheus.MustNewConstMetric(c.thr, prometheus.GaugeValue, float64(h.Through))
}
