package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Recovery is what the recovery at start did, exported as gauges that keep
// their value for the life of the process.
type Recovery struct {
	Replayed         uint64        // log records replayed after the snapshot
	Took             time.Duration // the whole recovery: snapshot load and replay
	SnapshotUsed     bool          // whether a snapshot was loaded
	SkippedSnapshots int           // damaged snapshots set aside
}

// RegisterRecovery registers r's figures on reg.
func RegisterRecovery(reg prometheus.Registerer, r Recovery) {
	gauge := func(name, help string, v float64) {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		g.Set(v)
		reg.MustRegister(g)
	}
	used := 0.0
	if r.SnapshotUsed {
		used = 1
	}
	gauge("marketd_recovery_replayed_records", "Log records replayed at start.", float64(r.Replayed))
	gauge("marketd_recovery_duration_seconds", "Time the recovery at start took (snapshot load and replay).", r.Took.Seconds())
	gauge("marketd_recovery_snapshot_used", "1 when the recovery at start loaded a snapshot, else 0.", used)
	gauge("marketd_recovery_skipped_snapshots", "Damaged snapshots set aside by the recovery at start.", float64(r.SkippedSnapshots))
}
