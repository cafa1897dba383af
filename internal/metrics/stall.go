package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"marketd/internal/stall"
)

// RegisterStall registers on reg the stall recorder's counters, read from
// rec when scraped (docs/OPERATIONS.md, "Stall traces").
func RegisterStall(reg prometheus.Registerer, rec *stall.Recorder) {
	reg.MustRegister(
		stallTriggers{rec: rec, desc: prometheus.NewDesc("marketd_stall_triggers_total",
			"Requests and log commits that took longer than -stall-threshold, by kind: request, commit (write to last acknowledgement) or held (a commit's first record held back by its market).",
			[]string{"kind"}, nil)},
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "marketd_stall_traces_written_total",
			Help: "Execution traces the stall recorder kept in -stall-dir.",
		}, func() float64 { return float64(rec.Stats().Written) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "marketd_stall_traces_dropped_total",
			Help: "Execution traces the stall recorder did not keep: a file error, or larger than -stall-max-mib (each logged).",
		}, func() float64 { return float64(rec.Stats().Dropped) }),
	)
}

// stallTriggers is the collector of the recorder's triggers by kind.
type stallTriggers struct {
	rec  *stall.Recorder
	desc *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c stallTriggers) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c stallTriggers) Collect(ch chan<- prometheus.Metric) {
	for k, n := range c.rec.Stats().Triggers {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), stall.Kind(k).String())
	}
}
