package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"marketd/core"
)

// CustodySource is what the custody collector reads; *core.Engine has it.
type CustodySource interface {
	// OpenTransfers lists the open transfers of a kind, oldest first, and
	// how many there are.
	OpenTransfers(kind core.TransferKind, limit, offset int) ([]core.AccountTransfer, int)
}

// custodyKinds are the transfer kinds an operator acts on: pending
// deposits to confirm or reject, queued withdrawals to send.
var custodyKinds = []core.TransferKind{core.TransferDeposit, core.TransferWithdrawal}

// custodyCollector reads the open deposits and withdrawals when scraped.
type custodyCollector struct {
	src         CustodySource
	now         func() time.Time
	open, older *prometheus.Desc
}

// RegisterCustody registers on reg the collector of the transfers waiting
// for an operator.
func RegisterCustody(reg prometheus.Registerer, src CustodySource, now func() time.Time) {
	reg.MustRegister(&custodyCollector{
		src: src, now: now,
		open: prometheus.NewDesc("marketd_custody_open_transfers",
			"Deposits pending and withdrawals queued, waiting for an operator, by kind.", []string{"kind"}, nil),
		older: prometheus.NewDesc("marketd_custody_oldest_open_transfer_seconds",
			"Age of the oldest open transfer of the kind (0 when none is open).", []string{"kind"}, nil),
	})
}

// Describe implements prometheus.Collector.
func (c *custodyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.open
	ch <- c.older
}

// Collect implements prometheus.Collector.
func (c *custodyCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.now().UnixNano()
	for _, k := range custodyKinds {
		oldest, n := c.src.OpenTransfers(k, 1, 0)
		age := 0.0
		if len(oldest) > 0 {
			age = max(0, time.Duration(now-oldest[0].Transfer.Time).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(n), k.String())
		ch <- prometheus.MustNewConstMetric(c.older, prometheus.GaugeValue, age, k.String())
	}
}
