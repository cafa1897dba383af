package load

import (
	"bytes"
	"fmt"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

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
	if f, ok := fams["go_gc_duration_seconds"]; ok && len(f.GetMetric()) == 1 && f.GetMetric()[0].GetSummary() != nil {
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
	if m.taken, m.snapshotsErr = value("marketd_snapshots_total"); m.snapshotsErr != nil {
		return m, nil
	}
	if m.snapshotAgeSeconds, m.snapshotsErr = value("marketd_snapshot_age_seconds"); m.snapshotsErr != nil {
		return m, nil
	}
	m.snapshotTookSeconds, m.snapshotsErr = value("marketd_snapshot_duration_seconds")
	return m, nil
}
