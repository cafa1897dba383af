package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"marketd/internal/stall"
)

// RegisterStall registers on reg the stall recorder's counters, read from
// rec when scraped (docs/OPERATIONS.md, "Stall traces").
func RegisterStall(reg prometheus.Registerer, rec *stall.Recorder) {
	reg.MustRegister(stallCollector{
		rec: rec,
		triggers: prometheus.NewDesc("marketd_stall_triggers_total",
			"Requests and log commits that took longer than -stall-threshold, by kind: request, commit (write to last acknowledgement) or held (a commit's first record held back by its market).",
			[]string{"kind"}, nil),
		traces: prometheus.NewDesc("marketd_stall_traces_total",
			"Execution traces of the stall recorder, by result: written (kept in -stall-dir) or dropped (an error, or larger than -stall-max-mib; logged).",
			[]string{"result"}, nil),
	})
}

// stallCollector is RegisterStall's collector.
type stallCollector struct {
	rec              *stall.Recorder
	triggers, traces *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c stallCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.triggers
	ch <- c.traces
}

// Collect implements prometheus.Collector.
func (c stallCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.rec.Stats()
	for k, n := range s.Triggers {
		ch <- prometheus.MustNewConstMetric(c.triggers, prometheus.CounterValue, float64(n), stall.Kind(k).String())
	}
	ch <- prometheus.MustNewConstMetric(c.traces, prometheus.CounterValue, float64(s.Written), "written")
	ch <- prometheus.MustNewConstMetric(c.traces, prometheus.CounterValue, float64(s.Dropped), "dropped")
}
