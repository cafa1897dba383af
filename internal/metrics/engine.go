package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"marketd/core"
	"marketd/core/money"
)

// kindLabel returns the label value of a record kind in
// marketd_operations_total (core's name for it), and whether the kind has a
// name: named kinds are exported from start, others once counted.
func kindLabel(k core.Kind) (string, bool) {
	name := k.String()
	return name, !strings.HasPrefix(name, "kind(")
}

// tradeTypes are the label values of a trade's type, by Counters' index.
var tradeTypes = [2]string{"buy", "sell"}

// EngineSource is what the engine collector reads; *core.Engine has it.
type EngineSource interface {
	Counters() core.Counters
	InboxDepth() (total, largest int)
	Stats() core.Stats
}

// engineCollector reads the engine's counters and totals when scraped.
// core keeps them as plain atomics (core stays free of metrics); the walk
// of the markets and the auth table that a scrape makes grows with their
// number and is paid once per scrape, nothing of it per request.
type engineCollector struct {
	src                                        EngineSource
	trades, volume, ops, busy, inbox, inboxMax *prometheus.Desc
	markets, accounts, keys, sessions          *prometheus.Desc
}

// RegisterEngine registers on reg the collector of src's counters and
// totals: trades, volume, operations by kind, busy refusals, inbox depth,
// markets by status, accounts, active keys and sessions.
func RegisterEngine(reg prometheus.Registerer, src EngineSource) {
	reg.MustRegister(&engineCollector{
		src: src,
		trades: prometheus.NewDesc("marketd_trades_total",
			"Trades since start, by currency, side (yes, no) and type (buy, sell).",
			[]string{"currency", "side", "type"}, nil),
		volume: prometheus.NewDesc("marketd_trade_volume_total",
			"Sum of the trades' costs since start, in whole units of the currency (micro-units / 1e6).",
			[]string{"currency"}, nil),
		ops: prometheus.NewDesc("marketd_operations_total",
			"State changes committed since start, by record kind (trade, split, merge, settle, oracle_*, ...).",
			[]string{"kind"}, nil),
		busy: prometheus.NewDesc("marketd_market_busy_total",
			"Commands refused because their market's inbox stayed full until the request's deadline (503 Market busy).",
			nil, nil),
		inbox: prometheus.NewDesc("marketd_market_inbox_commands",
			"Commands waiting in all market inboxes, sampled at scrape time.", nil, nil),
		inboxMax: prometheus.NewDesc("marketd_market_inbox_max_commands",
			"Commands waiting in the fullest market inbox, sampled at scrape time.", nil, nil),
		markets: prometheus.NewDesc("marketd_markets",
			"Markets by status (an active market past its closing time counts as closed).",
			[]string{"status"}, nil),
		accounts: prometheus.NewDesc("marketd_accounts", "Accounts, the house excluded.", nil, nil),
		keys:     prometheus.NewDesc("marketd_api_keys_active", "API keys neither revoked nor expired.", nil, nil),
		sessions: prometheus.NewDesc("marketd_sessions_active", "Sessions neither revoked nor expired.", nil, nil),
	})
}

// Describe implements prometheus.Collector.
func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.trades, c.volume, c.ops, c.busy, c.inbox, c.inboxMax,
		c.markets, c.accounts, c.keys, c.sessions} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. Every label combination of a
// fixed set is exported, zero included, so that rate() and the alert
// rules find the series before the first event.
func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	cnt := c.src.Counters()
	for cur := range money.Currency(money.NumCurrencies) {
		for side := range core.Side(core.NumSides) {
			for t, typ := range tradeTypes {
				ch <- prometheus.MustNewConstMetric(c.trades, prometheus.CounterValue,
					float64(cnt.Trades[cur][side][t]), cur.String(), side.String(), typ)
			}
		}
		ch <- prometheus.MustNewConstMetric(c.volume, prometheus.CounterValue, WholeUnits(cnt.Volume[cur]), cur.String())
	}
	for k, n := range cnt.Records {
		kind := core.Kind(k)
		if kind == core.KindImage {
			continue // snapshot chunks are written, never committed
		}
		if name, named := kindLabel(kind); named || n > 0 {
			ch <- prometheus.MustNewConstMetric(c.ops, prometheus.CounterValue, float64(n), name)
		}
	}
	ch <- prometheus.MustNewConstMetric(c.busy, prometheus.CounterValue, float64(cnt.Busy))
	total, largest := c.src.InboxDepth()
	ch <- prometheus.MustNewConstMetric(c.inbox, prometheus.GaugeValue, float64(total))
	ch <- prometheus.MustNewConstMetric(c.inboxMax, prometheus.GaugeValue, float64(largest))
	st := c.src.Stats()
	for s, n := range st.Markets {
		ch <- prometheus.MustNewConstMetric(c.markets, prometheus.GaugeValue, float64(n), core.Status(s).String())
	}
	ch <- prometheus.MustNewConstMetric(c.accounts, prometheus.GaugeValue, float64(st.Accounts))
	ch <- prometheus.MustNewConstMetric(c.keys, prometheus.GaugeValue, float64(st.ActiveKeys))
	ch <- prometheus.MustNewConstMetric(c.sessions, prometheus.GaugeValue, float64(st.ActiveSessions))
}

// WholeUnits converts micro-units to whole units for a metric: the float64
// nearest to a/1e6 (a below 2^53 converts exactly, and IEEE division rounds
// correctly). It prints back as the exact decimal amount while that has at
// most 15 significant digits, that is below 1e9 whole units.
func WholeUnits(a money.Amount) float64 { return float64(a) / float64(money.Scale) }
