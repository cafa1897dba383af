package load

import (
	"bytes"
	"fmt"
	"net/url"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The metric families readMetrics reads, and all a MetricsWatch asks for.
const (
	gcMetric           = "go_gc_duration_seconds"
	snapshotsMetric    = "marketd_snapshots_total"
	snapshotAgeMetric  = "marketd_snapshot_age_seconds"
	snapshotTookMetric = "marketd_snapshot_duration_seconds"
)

// metricsQuery returns the query of a MetricsWatch's scrapes: client_golang's
// handler (promhttp, which marketd serves /metrics with) then encodes
// only the families readMetrics reads, so that a scrape every 250 ms
// costs the server, and this process's parser, four families and not the
// server's hundred or so: the handlers marketd is compared with are not
// scraped at all. A server that ignores the query answers them all, which
// readMetrics reads as well.
func metricsQuery() string {
	return url.Values{"name[]": {gcMetric, snapshotsMetric, snapshotAgeMetric, snapshotTookMetric}}.Encode()
}

// serverMetrics is what a MetricsWatch reads from one /metrics body.
type serverMetrics struct {
	// taken is marketd_snapshots_total, snapshotAgeSeconds the newest
	// snapshot's age and snapshotTookSeconds the last one's duration;
	// snapshotsErr names the one missing, if any.
	taken, snapshotAgeSeconds, snapshotTookSeconds float64
	snapshotsErr                                   error
	// collections is the count of go_gc_duration_seconds, the
	// collections completed since the server started; -1 without it.
	collections int64
}

// readMetrics reads the snapshot figures and the collections' count out of
// a /metrics body in the text format: an error only for a body that is
// not one, a missing figure in the fields.
func readMetrics(body []byte) (serverMetrics, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return serverMetrics{}, err
	}
	m := serverMetrics{collections: -1}
	if f, ok := fams[gcMetric]; ok && len(f.GetMetric()) == 1 && f.GetMetric()[0].GetSummary() != nil {
		m.collections = int64(f.GetMetric()[0].GetSummary().GetSampleCount())
	}
	value := func(name string) (float64, error) {
		f, ok := fams[name]
		if !ok || len(f.GetMetric()) != 1 {
			return 0, fmt.Errorf("no metric %s", name)
		}
		x := f.GetMetric()[0]
		if c := x.GetCounter(); c != nil {
			return c.GetValue(), nil
		}
		return x.GetGauge().GetValue(), nil
	}
	if m.taken, m.snapshotsErr = value(snapshotsMetric); m.snapshotsErr != nil {
		return m, nil
	}
	if m.snapshotAgeSeconds, m.snapshotsErr = value(snapshotAgeMetric); m.snapshotsErr != nil {
		return m, nil
	}
	m.snapshotTookSeconds, m.snapshotsErr = value(snapshotTookMetric)
	return m, nil
}
