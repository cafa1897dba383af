package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"marketd/wal"
)

// durationBuckets are the upper bounds, in seconds, of the fsync and
// commit histograms: 100 us doubling to about 6.6 s. A healthy fsync here
// takes 0.3-1 ms per commit (docs/PERFORMANCE.md); a failing disk takes seconds.
var durationBuckets = prometheus.ExponentialBuckets(0.0001, 2, 17)

// heldBuckets are the upper bounds, in seconds, of the held-commit
// histogram: 10 us doubling to about 5 s. A market actor stays between
// Next and Append for about a microsecond at the median; the holes the
// writer meets lasted 0.1-0.5 ms at the median and up to tens of
// milliseconds when the actor lost its processor (docs/PERFORMANCE.md,
// "The open loop's tail").
var heldBuckets = prometheus.ExponentialBuckets(0.00001, 2, 20)

// recordsBuckets are the upper bounds of the records-per-commit histogram:
// 1 doubling to wal.DefaultMaxBatchRecords.
var recordsBuckets = prometheus.ExponentialBuckets(1, 2, 13)

// LogSource is what the log collector reads of the log; *wal.Log has it.
type LogSource interface {
	Stats() wal.Stats
	Durable() uint64
	Err() error
}

// Log is the write-ahead log's metrics: histograms of every commit, which
// the log's writer goroutine observes through ObserveCommit, and counters
// read from the log when scraped. Make it before opening the log (its
// Observer goes into wal.Options), then Watch the opened log.
type Log struct {
	records, fsync, took, held, gathered prometheus.Histogram

	src                                                  LogSource
	appended, bytes, commits, durable, failed, torn, cut *prometheus.Desc
}

// NewLog registers the commit histograms on reg.
func NewLog(reg prometheus.Registerer) *Log {
	l := &Log{
		records: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "marketd_wal_commit_records",
			Help:    "Records written by one commit (one write and one fsync).",
			Buckets: recordsBuckets,
		}),
		fsync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "marketd_wal_fsync_duration_seconds",
			Help:    "Time of one commit's fsyncs (the segment file, and the log directory after a new segment).",
			Buckets: durationBuckets,
		}),
		took: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "marketd_wal_commit_duration_seconds",
			Help:    "Time of one whole commit: write, fsyncs and the acknowledgements sent.",
			Buckets: durationBuckets,
		}),
		held: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "marketd_wal_commit_held_seconds",
			Help:    "Time a commit's first record was missing while a later record was ready (a market between reserving its sequence number and appending its record holds back every later record); observed only for commits that waited so.",
			Buckets: heldBuckets,
		}),
		gathered: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "marketd_wal_commit_gathered_seconds",
			Help:    "Time the log's writer waited before a commit for more records to join it (-commit-interval); observed only for commits that followed such a wait.",
			Buckets: heldBuckets,
		}),
	}
	reg.MustRegister(l.records, l.fsync, l.took, l.held, l.gathered)
	return l
}

// ObserveCommit implements wal.Observer. It runs on the log's writer
// goroutine, the histograms' only writer, so no observation contends.
func (l *Log) ObserveCommit(c wal.Commit) {
	l.records.Observe(float64(c.Records))
	if c.Fsync > 0 {
		l.fsync.Observe(c.Fsync.Seconds())
	}
	l.took.Observe(c.Took.Seconds())
	if c.Held > 0 {
		l.held.Observe(c.Held.Seconds())
	}
	if c.Gathered > 0 {
		l.gathered.Observe(c.Gathered.Seconds())
	}
}

// Watch registers on reg the counters read from src at scrape time.
func (l *Log) Watch(reg prometheus.Registerer, src LogSource) {
	l.src = src
	l.appended = prometheus.NewDesc("marketd_wal_records_total", "Records appended to the write-ahead log since start.", nil, nil)
	l.bytes = prometheus.NewDesc("marketd_wal_bytes_total", "Frame bytes appended to the write-ahead log since start.", nil, nil)
	l.commits = prometheus.NewDesc("marketd_wal_commits_total", "Commits (one write and one fsync each) since start.", nil, nil)
	l.durable = prometheus.NewDesc("marketd_wal_durable_seq", "Sequence number of the last durable record.", nil, nil)
	l.failed = prometheus.NewDesc("marketd_wal_failed", "1 once the log has failed (a write or fsync error: nothing more is acknowledged until a restart), else 0.", nil, nil)
	l.torn = prometheus.NewDesc("marketd_wal_torn_tails_cut_total", "Torn log tails cut at open.", nil, nil)
	l.cut = prometheus.NewDesc("marketd_wal_torn_bytes_cut_total", "Bytes cut from torn log tails at open.", nil, nil)
	reg.MustRegister(logCollector{l})
}

// logCollector is Log's scrape-time part, registered by Watch.
type logCollector struct{ l *Log }

// Describe implements prometheus.Collector.
func (c logCollector) Describe(ch chan<- *prometheus.Desc) {
	l := c.l
	for _, d := range []*prometheus.Desc{l.appended, l.bytes, l.commits, l.durable, l.failed, l.torn, l.cut} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c logCollector) Collect(ch chan<- prometheus.Metric) {
	l := c.l
	st := l.src.Stats()
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	counter(l.appended, st.Records)
	counter(l.bytes, st.Bytes)
	counter(l.commits, st.Batches)
	counter(l.torn, st.TornTailRepairs)
	counter(l.cut, st.TornBytesCut)
	ch <- prometheus.MustNewConstMetric(l.durable, prometheus.GaugeValue, float64(l.src.Durable()))
	failed := 0.0
	if l.src.Err() != nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(l.failed, prometheus.GaugeValue, failed)
}
