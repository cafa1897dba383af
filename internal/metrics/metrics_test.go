package metrics

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"marketd/core"
	"marketd/core/money"
	"marketd/snapshot"
	"marketd/wal"
)

type fakeEngine struct {
	c     core.Counters
	total int
	most  int
	st    core.Stats
}

func (f *fakeEngine) Counters() core.Counters          { return f.c }
func (f *fakeEngine) InboxDepth() (total, largest int) { return f.total, f.most }
func (f *fakeEngine) Stats() core.Stats                { return f.st }

func TestEngineCollector(t *testing.T) {
	f := &fakeEngine{total: 7, most: 5}
	f.c.Trades[money.KP][core.Yes][0] = 3
	f.c.Trades[money.USDC][core.No][1] = 2
	f.c.Volume[money.KP] = 1_234_567_891 // 1234.567891 KP
	f.c.Records[core.KindTrade] = 5
	f.c.Records[core.KindSplit] = 1
	f.c.Records[77] = 4 // a kind not named yet
	f.c.Busy = 9
	f.st.Markets[core.StatusActive] = 2
	f.st.Accounts, f.st.ActiveKeys, f.st.ActiveSessions = 10, 4, 3
	reg := prometheus.NewRegistry()
	RegisterEngine(reg, f)
	want := `
# HELP marketd_trades_total Trades since start, by currency, side (yes, no) and type (buy, sell).
# TYPE marketd_trades_total counter
marketd_trades_total{currency="kp",side="no",type="buy"} 0
marketd_trades_total{currency="kp",side="no",type="sell"} 0
marketd_trades_total{currency="kp",side="yes",type="buy"} 3
marketd_trades_total{currency="kp",side="yes",type="sell"} 0
marketd_trades_total{currency="usdc",side="no",type="buy"} 0
marketd_trades_total{currency="usdc",side="no",type="sell"} 2
marketd_trades_total{currency="usdc",side="yes",type="buy"} 0
marketd_trades_total{currency="usdc",side="yes",type="sell"} 0
# HELP marketd_trade_volume_total Sum of the trades' costs since start, in whole units of the currency (micro-units / 1e6).
# TYPE marketd_trade_volume_total counter
marketd_trade_volume_total{currency="kp"} 1234.567891
marketd_trade_volume_total{currency="usdc"} 0
# HELP marketd_market_busy_total Commands refused because their market's inbox stayed full until the request's deadline (503 Market busy).
# TYPE marketd_market_busy_total counter
marketd_market_busy_total 9
# HELP marketd_market_inbox_commands Commands waiting in all market inboxes, sampled at scrape time.
# TYPE marketd_market_inbox_commands gauge
marketd_market_inbox_commands 7
# HELP marketd_market_inbox_max_commands Commands waiting in the fullest market inbox, sampled at scrape time.
# TYPE marketd_market_inbox_max_commands gauge
marketd_market_inbox_max_commands 5
# HELP marketd_accounts Accounts, the house excluded.
# TYPE marketd_accounts gauge
marketd_accounts 10
# HELP marketd_api_keys_active API keys neither revoked nor expired.
# TYPE marketd_api_keys_active gauge
marketd_api_keys_active 4
# HELP marketd_sessions_active Sessions neither revoked nor expired.
# TYPE marketd_sessions_active gauge
marketd_sessions_active 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"marketd_trades_total", "marketd_trade_volume_total", "marketd_market_busy_total",
		"marketd_market_inbox_commands", "marketd_market_inbox_max_commands", "marketd_accounts",
		"marketd_api_keys_active", "marketd_sessions_active"); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() == "marketd_operations_total" {
			for _, m := range mf.GetMetric() {
				ops[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	for kind, n := range map[string]float64{"trade": 5, "split": 1, "kind(77)": 4, "merge": 0, "settle": 0, "oracle_vote": 0} {
		if v, ok := ops[kind]; !ok || v != n {
			t.Errorf("marketd_operations_total{kind=%q} = %v (present %v), want %v", kind, v, ok, n)
		}
	}
	if _, ok := ops["kind(78)"]; ok {
		t.Errorf("a kind never counted is exported")
	}
}

// TestWholeUnits checks that amounts below 1e15 micro-units (1e9 whole
// units: at most 15 significant digits) convert to the float64 that prints
// as their exact decimal value, on chosen and seeded random amounts.
func TestWholeUnits(t *testing.T) {
	const seed = 14
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	amounts := []money.Amount{0, 1, 999_999, 1_000_000, 1_234_567_891, 999_999_999_999_999, -5}
	for range 10000 {
		amounts = append(amounts, money.Amount(rng.Int64N(1e15)))
	}
	for _, a := range amounts {
		got := strconv.FormatFloat(WholeUnits(a), 'f', -1, 64)
		if dec := a.String(); !sameDecimal(got, dec) {
			t.Fatalf("WholeUnits(%d) prints %s, want %s", int64(a), got, dec)
		}
	}
}

// sameDecimal compares two decimal texts ignoring trailing zeros.
func sameDecimal(a, b string) bool {
	trim := func(s string) string {
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		return s
	}
	return trim(a) == trim(b)
}

type fakeLog struct {
	st  wal.Stats
	dur uint64
	err error
}

func (f *fakeLog) Stats() wal.Stats { return f.st }
func (f *fakeLog) Durable() uint64  { return f.dur }
func (f *fakeLog) Err() error       { return f.err }

func TestLogMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	l := NewLog(reg)
	l.ObserveCommit(wal.Commit{Records: 3, Bytes: 300, Fsync: 2 * time.Millisecond, Took: 3 * time.Millisecond, Held: 500 * time.Microsecond})
	l.ObserveCommit(wal.Commit{Records: 1, Bytes: 100, Took: time.Millisecond}) // fsync off: no fsync observed
	l.ObserveCommit(wal.Commit{Records: 5, Bytes: 500, Fsync: time.Millisecond, Took: 2 * time.Millisecond, Gathered: 300 * time.Microsecond})
	src := &fakeLog{st: wal.Stats{Records: 9, Bytes: 900, Batches: 3, TornTailRepairs: 1, TornBytesCut: 17}, dur: 9}
	l.Watch(reg, src)
	check := func(name string, want float64) {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
			m := mf.GetMetric()[0]
			var got float64
			switch {
			case m.GetHistogram() != nil:
				got = float64(m.GetHistogram().GetSampleCount())
			case m.GetCounter() != nil:
				got = m.GetCounter().GetValue()
			default:
				got = m.GetGauge().GetValue()
			}
			if got != want {
				t.Errorf("%s = %v, want %v", name, got, want)
			}
			return
		}
		t.Errorf("%s not gathered", name)
	}
	check("marketd_wal_commit_records", 3)
	check("marketd_wal_fsync_duration_seconds", 2)
	check("marketd_wal_commit_duration_seconds", 3)
	check("marketd_wal_commit_held_seconds", 1)     // only the commit that waited for a hole
	check("marketd_wal_commit_gathered_seconds", 1) // only the commit that waited for the interval
	check("marketd_wal_records_total", 9)
	check("marketd_wal_bytes_total", 900)
	check("marketd_wal_commits_total", 3)
	check("marketd_wal_durable_seq", 9)
	check("marketd_wal_torn_tails_cut_total", 1)
	check("marketd_wal_torn_bytes_cut_total", 17)
	check("marketd_wal_failed", 0)
	src.err = errors.New("fsync failed")
	check("marketd_wal_failed", 1)
}

type fakeSnaps struct {
	st snapshot.Stats
	h  snapshot.Header
	ok bool
}

func (f *fakeSnaps) Stats() snapshot.Stats         { return f.st }
func (f *fakeSnaps) Last() (snapshot.Header, bool) { return f.h, f.ok }

func TestSnapshotAge(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	now := start.Add(90 * time.Second)
	f := &fakeSnaps{}
	reg := prometheus.NewRegistry()
	RegisterSnapshots(reg, f, start, func() time.Time { return now })
	age := func() float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "marketd_snapshot_age_seconds" {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no marketd_snapshot_age_seconds")
		return 0
	}
	if got := age(); got != 90 {
		t.Errorf("age without a snapshot = %v, want 90 (since start)", got)
	}
	f.st.LastGoodAt = start.Add(60 * time.Second)
	if got := age(); got != 30 {
		t.Errorf("age = %v, want 30", got)
	}
}

type fakeCustody map[core.TransferKind][]core.AccountTransfer

func (f fakeCustody) OpenTransfers(kind core.TransferKind, limit, offset int) ([]core.AccountTransfer, int) {
	all := f[kind]
	return all[min(offset, len(all)):min(offset+limit, len(all))], len(all)
}

func TestCustodyCollector(t *testing.T) {
	now := time.Unix(10_000, 0)
	f := fakeCustody{core.TransferWithdrawal: {
		{Transfer: core.Transfer{Kind: core.TransferWithdrawal, Time: now.Add(-90 * time.Minute).UnixNano()}},
		{Transfer: core.Transfer{Kind: core.TransferWithdrawal, Time: now.Add(-time.Minute).UnixNano()}},
	}}
	reg := prometheus.NewRegistry()
	RegisterCustody(reg, f, func() time.Time { return now })
	want := `
# HELP marketd_custody_oldest_open_transfer_seconds Age of the oldest open transfer of the kind (0 when none is open).
# TYPE marketd_custody_oldest_open_transfer_seconds gauge
marketd_custody_oldest_open_transfer_seconds{kind="deposit"} 0
marketd_custody_oldest_open_transfer_seconds{kind="withdrawal"} 5400
# HELP marketd_custody_open_transfers Deposits pending and withdrawals queued, waiting for an operator, by kind.
# TYPE marketd_custody_open_transfers gauge
marketd_custody_open_transfers{kind="deposit"} 0
marketd_custody_open_transfers{kind="withdrawal"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}
