package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"marketd/core/money"
)

// The observability tests: the metrics of an end-to-end workload checked
// to the unit, request ids, and no secret in any log line
// (docs/OPERATIONS.md).

// countingTransport counts the requests sent through it.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int64
}

// RoundTrip implements http.RoundTripper.
func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// countingClient returns a client of p whose requests are counted.
func countingClient(t *testing.T, p *proc) (*client, *countingTransport) {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	ct := &countingTransport{base: tr}
	return &client{t: t, base: "http://" + p.addr, hc: &http.Client{Transport: ct, Timeout: 20 * time.Second}}, ct
}

// scrape fetches url's metrics and returns every sample keyed
// name{label="value",...} (labels sorted by name; histograms give their
// _bucket, _sum and _count samples), with the raw text.
func scrape(t *testing.T, url string) (map[string]float64, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: status %d, err %v\n%s", url, resp.StatusCode, err, body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("scrape %s: parse: %v", url, err)
	}
	out := map[string]float64{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
			}
			key := func(suffix string, extra ...string) string {
				ls := append(slices.Clone(labels), extra...)
				sort.Strings(ls)
				k := name + suffix
				if len(ls) > 0 {
					k += "{" + strings.Join(ls, ",") + "}"
				}
				return k
			}
			switch {
			case m.GetCounter() != nil:
				out[key("")] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key("")] = m.GetGauge().GetValue()
			case m.GetUntyped() != nil:
				out[key("")] = m.GetUntyped().GetValue()
			case m.GetHistogram() != nil:
				h := m.GetHistogram()
				out[key("_count")] = float64(h.GetSampleCount())
				out[key("_sum")] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					out[key("_bucket", fmt.Sprintf("le=%q", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)))] = float64(b.GetCumulativeCount())
				}
			case m.GetSummary() != nil:
				out[key("_count")] = float64(m.GetSummary().GetSampleCount())
				out[key("_sum")] = m.GetSummary().GetSampleSum()
			}
		}
	}
	return out, body
}

// sumMatching sums the samples whose key starts with prefix and contains
// every part.
func sumMatching(s map[string]float64, prefix string, parts ...string) float64 {
	var sum float64
	for k, v := range s {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		ok := true
		for _, p := range parts {
			if !strings.Contains(k, p) {
				ok = false
				break
			}
		}
		if ok {
			sum += v
		}
	}
	return sum
}

// workloadSecrets are the credentials a workload used, for the log grep.
type workloadSecrets []string

// workloadResult is what a workload did, as the metrics must count it.
type workloadResult struct {
	trades       map[string]int // by "currency,side,type"
	volumeMicros money.Amount   // sum of the trades' costs, KP
	unauthorized int            // 401s received
	forbidden    int            // 403s received
	rateLimited  int            // 429s received
	tooLarge     int            // 413s received (answered without a route)
	secrets      workloadSecrets
	requestIDs   []string // ids sent in X-Request-Id and echoed
	raw          int      // requests sent by rawRequest
}

// runWorkload drives the server through trades, a split and a merge, and
// refusals of each kind the metrics count. The admin's session is made
// from testAdminPassword.
func runWorkload(t *testing.T, c *client) workloadResult {
	t.Helper()
	res := workloadResult{trades: map[string]int{}}
	admin := c.login("admin", testAdminPassword)
	res.secrets = append(res.secrets, testAdminPassword, admin)
	m := c.createMarket(sessionCred(admin), "observed market", nil)

	alice, _ := c.register("obs-alice")
	res.secrets = append(res.secrets, "pw-obs-alice-123", alice)
	tradeKey := c.createKey(sessionCred(alice), "trader", []string{"read", "trade"}, nil).Key
	readKey := c.createKey(sessionCred(alice), "reader", []string{"read"}, nil).Key
	burstKey := c.createKey(sessionCred(alice), "burst", []string{"read"}, nil).Key
	res.secrets = append(res.secrets, tradeKey, readKey, burstKey)

	for _, tr := range []struct{ side, typ, shares string }{
		{"yes", "buy", "10"}, {"no", "buy", "5"}, {"yes", "sell", "3"}, {"yes", "buy", "2.5"}, {"no", "sell", "1"},
	} {
		got := c.trade(keyCred(tradeKey), m.ID.String(), tr.side, tr.typ, tr.shares)
		res.trades["kp,"+tr.side+","+tr.typ]++
		res.volumeMicros += got.Cost
	}
	c.splitMerge(keyCred(tradeKey), m.ID.String(), "split", "4")
	c.splitMerge(keyCred(tradeKey), m.ID.String(), "merge", "1.5")

	// A wrong password: the attempt is refused and logged nowhere.
	c.mustError(http.MethodPost, "/api/auth/login", cred{}, map[string]any{"name": "obs-alice", "password": "wrong-password-obs"},
		http.StatusUnauthorized, "Invalid credentials")
	res.unauthorized++
	res.secrets = append(res.secrets, "wrong-password-obs")
	c.mustError(http.MethodGet, "/api/portfolio", cred{}, nil, http.StatusUnauthorized, "Authentication required")
	res.unauthorized++
	// A key that does not exist, well formed: still a secret of its sender.
	ghost := "svc_live_" + strings.Repeat("ab", 16)
	res.secrets = append(res.secrets, ghost)
	c.mustError(http.MethodGet, "/api/portfolio", keyCred(ghost), nil, http.StatusUnauthorized, "Authentication required")
	res.unauthorized++
	c.mustError(http.MethodPost, "/api/markets/trade", keyCred(readKey), tradeBody(m.ID.String(), "yes", "buy", "1"),
		http.StatusForbidden, "Insufficient scope")
	res.forbidden++

	// The standard tier allows 60 requests a minute per key: the 61st in
	// the same window is refused (the window may turn during the burst,
	// so count what came back).
	for range 61 {
		r := c.do(http.MethodGet, "/api/agents/me", keyCred(burstKey), nil)
		switch r.status {
		case http.StatusOK:
		case http.StatusTooManyRequests:
			res.rateLimited++
		default:
			t.Fatalf("GET /api/agents/me: status %d: %s", r.status, r.body)
		}
	}
	if res.rateLimited == 0 {
		// Two windows each took part of the burst; one more burst of 60
		// in the new window must hit the limit.
		for range 60 {
			if r := c.do(http.MethodGet, "/api/agents/me", keyCred(burstKey), nil); r.status == http.StatusTooManyRequests {
				res.rateLimited++
			}
		}
	}

	// A body announced over the limit is refused on its Content-Length,
	// before it is read (sent by hand: net/http would fail writing the
	// body the server does not read).
	if r := rawRequest(t, c.base, "POST /api/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+
		"Content-Length: 71680\r\nCookie: session="+alice+"\r\n\r\n"); r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("70 KiB body: status %d, want 413", r.StatusCode)
	}
	res.tooLarge++
	res.raw++

	// Request ids: a valid one is echoed; a missing or invalid one is
	// replaced by a generated one.
	for _, id := range []string{"obs-req-1", strings.Repeat("z", 128)} {
		req, err := http.NewRequest(http.MethodGet, c.base+"/api/portfolio", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Request-Id", id)
		resp, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if got := resp.Header.Get("X-Request-Id"); got != id {
			t.Errorf("X-Request-Id %q echoed as %q", id, got)
		}
		res.unauthorized++
		res.requestIDs = append(res.requestIDs, id)
	}
	seen := map[string]bool{}
	for _, id := range []string{"", strings.Repeat("z", 129), "bad\tid"} {
		head := "GET /healthz HTTP/1.1\r\nHost: x\r\n"
		if id != "" {
			head += "X-Request-Id: " + id + "\r\n"
		}
		r := rawRequest(t, c.base, head+"\r\n")
		res.raw++
		if r.StatusCode != http.StatusOK {
			t.Fatalf("GET /healthz with X-Request-Id %q: status %d", id, r.StatusCode)
		}
		got := r.Header.Get("X-Request-Id")
		if got == "" || got == id || seen[got] {
			t.Errorf("X-Request-Id %q answered with %q: want a new generated id", id, got)
		}
		seen[got] = true
	}
	return res
}

// idLike matches label values that look like an id: a UUID, an API key,
// or a long hex string.
var idLike = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-|svc_live_|[0-9a-f]{16}`)

// walSettled reports whether a scrape saw the log's counters and its
// writer's histograms at the same commit: every record appended counted in
// a commit's observation, every commit in each histogram.
func walSettled(m map[string]float64) bool {
	commits := m["marketd_wal_commits_total"]
	return m["marketd_wal_commit_records_sum"] == m["marketd_wal_records_total"] &&
		m["marketd_wal_commit_records_count"] == commits &&
		m["marketd_wal_fsync_duration_seconds_count"] == commits &&
		m["marketd_wal_commit_duration_seconds_count"] == commits
}

// TestMetricsEndToEnd runs the workload against the real server and
// checks that the counters moved by exactly what it did, that the
// histograms counted every request, that /metrics carries no id-like label
// value, and that the access log names the request ids.
func TestMetricsEndToEnd(t *testing.T) {
	p := startProc(t, "metrics", procOptions{dataDir: t.TempDir(), args: []string{"-access-log"}})
	c, sent := countingClient(t, p)
	// The first scrape may fall while a commit of the server's own (the
	// start's records, a key-usage flush) is between the log's counters
	// and the writer's histograms, which would put the deltas below one
	// commit apart however long the second scrape waits: scrape again
	// until the two agree. Each scrape is counted by the next one, so the
	// last is the one counted below.
	before, _ := scrape(t, c.base+"/metrics")
	for try := 0; try < 50 && !walSettled(before); try++ {
		time.Sleep(20 * time.Millisecond)
		before, _ = scrape(t, c.base+"/metrics")
	}
	if !walSettled(before) {
		t.Fatalf("before the workload, the log's counters and its writer's histograms did not agree within 1 s")
	}
	sent.n.Store(0)
	res := runWorkload(t, c)
	// The first scrape counts itself once answered; rawRequest's are sent
	// past the counting transport.
	requests := sent.n.Load() + 1 + int64(res.raw)
	after, text := scrape(t, c.base+"/metrics")
	delta := func(key string) float64 { return after[key] - before[key] }
	// The log's counters and its writer's histograms are separate metrics:
	// a scrape taken while the writer is between them (the last commit's
	// observation after its answers were released, or a background record
	// such as the key-usage flush, counted by core as it is applied and by
	// the log once committed) sees them one commit apart. Scrape again
	// until they agree; each extra scrape is one more request counted.
	apart := func() bool {
		commits := delta("marketd_wal_commits_total")
		ops := sumMatching(after, "marketd_operations_total") - sumMatching(before, "marketd_operations_total")
		return ops != delta("marketd_wal_records_total") ||
			delta("marketd_wal_commit_records_sum") != delta("marketd_wal_records_total") ||
			delta("marketd_wal_commit_records_count") != commits ||
			delta("marketd_wal_fsync_duration_seconds_count") != commits ||
			delta("marketd_wal_commit_duration_seconds_count") != commits
	}
	for try := 0; try < 50 && apart(); try++ {
		time.Sleep(20 * time.Millisecond)
		after, text = scrape(t, c.base+"/metrics")
		requests++
	}

	for _, typ := range []string{"buy", "sell"} {
		for _, side := range []string{"yes", "no"} {
			key := fmt.Sprintf(`marketd_trades_total{currency="kp",side=%q,type=%q}`, side, typ)
			if got, want := delta(key), float64(res.trades["kp,"+side+","+typ]); got != want {
				t.Errorf("%s moved by %v, want %v", key, got, want)
			}
		}
	}
	// The volume in whole KP, converted exactly: it prints as the decimal
	// of the micro-units.
	vol := delta(`marketd_trade_volume_total{currency="kp"}`)
	if got, want := strconv.FormatFloat(vol, 'f', -1, 64), res.volumeMicros.String(); !sameDecimal(got, want) {
		t.Errorf("volume moved by %s KP, want %s", got, want)
	}
	for key, want := range map[string]float64{
		`marketd_operations_total{kind="trade"}`:                         5,
		`marketd_operations_total{kind="split"}`:                         1,
		`marketd_operations_total{kind="merge"}`:                         1,
		`marketd_operations_total{kind="market_created"}`:                1,
		`marketd_http_refusals_total{reason="unauthorized"}`:             float64(res.unauthorized),
		`marketd_http_refusals_total{reason="forbidden"}`:                float64(res.forbidden),
		`marketd_http_refusals_total{reason="rate_limited"}`:             float64(res.rateLimited),
		`marketd_http_refusals_total{reason="body_too_large"}`:           float64(res.tooLarge),
		`marketd_http_refusals_total{reason="unavailable"}`:              0,
		`marketd_market_busy_total`:                                      0,
		`marketd_wal_failed`:                                             0,
		`marketd_http_requests_total{code="413",method="",route="none"}`: float64(res.tooLarge),
	} {
		if got := delta(key); got != want {
			t.Errorf("%s moved by %v, want %v", key, got, want)
		}
	}
	// Records appended: the log's counter, its durable sequence number and
	// core's count by kind are three separate counts of the same records.
	recs := delta("marketd_wal_records_total")
	if seq := delta("marketd_wal_durable_seq"); recs != seq || recs < 9 {
		t.Errorf("wal records moved by %v, durable seq by %v: want equal, at least the 9 changes made", recs, seq)
	}
	if ops := sumMatching(after, "marketd_operations_total") - sumMatching(before, "marketd_operations_total"); ops != recs {
		t.Errorf("operations moved by %v, wal records by %v", ops, recs)
	}
	// The writer's histograms saw every commit and every record in them.
	if got := delta("marketd_wal_commit_records_sum"); got != recs {
		t.Errorf("records per commit summed to %v, wal records moved by %v", got, recs)
	}
	commits := delta("marketd_wal_commits_total")
	for _, h := range []string{"marketd_wal_commit_records_count", "marketd_wal_fsync_duration_seconds_count", "marketd_wal_commit_duration_seconds_count"} {
		if got := delta(h); got != commits || commits == 0 {
			t.Errorf("%s moved by %v, commits by %v", h, got, commits)
		}
	}
	// Every request answered is counted once by status, and once by the
	// latency histogram unless no route took it.
	if got := sumMatching(after, "marketd_http_requests_total") - sumMatching(before, "marketd_http_requests_total"); got != float64(requests) {
		t.Errorf("requests counted %v, sent %d", got, requests)
	}

	hist := sumMatching(after, "marketd_http_request_duration_seconds_count") - sumMatching(before, "marketd_http_request_duration_seconds_count")
	if want := float64(requests - int64(res.tooLarge)); hist != want {
		t.Errorf("latency histogram counted %v, want %v", hist, want)
	}
	if got, want := delta(`marketd_http_request_duration_seconds_count{method="POST",route="/api/markets/trade"}`), 6.0; got != want {
		t.Errorf("trade route histogram counted %v, want %v (5 trades, 1 refused)", got, want)
	}
	if after[`marketd_ready`] != 1 || after[`marketd_phase{phase="serving"}`] != 1 {
		t.Errorf("marketd_ready %v, serving %v: want 1", after[`marketd_ready`], after[`marketd_phase{phase="serving"}`])
	}
	for key := range after {
		if i := strings.IndexByte(key, '{'); i >= 0 && idLike.MatchString(key[i:]) {
			t.Errorf("id-like label value: %s", key)
		}
	}
	for _, s := range res.secrets {
		if bytes.Contains(text, []byte(s)) {
			t.Errorf("the scrape holds a secret of the workload")
		}
	}

	if code := p.terminate(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
	// The access log names the ids of refused requests.
	for _, id := range res.requestIDs {
		if !p.stderr.contains(`request_id=` + id) {
			t.Errorf("no log line with request_id=%s", id)
		}
	}
	// Every refusal says how long it took, the 413s that fasthttp refused
	// before the request had a start time too: never the hours since the
	// zero time.
	inHours := regexp.MustCompile(`took=\d+h`)
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(line, `msg="request refused"`) && inHours.MatchString(line) {
			t.Errorf("a refusal's time in hours: %s", line)
		}
	}
	checkNoSecrets(t, p, res.secrets)
}

// TestNoSecretInJSONLogs runs the workload with JSON logs and the access
// log on, and finds none of its keys, passwords and session tokens in any
// line; the text format is checked by TestMetricsEndToEnd.
func TestNoSecretInJSONLogs(t *testing.T) {
	p := startProc(t, "json logs", procOptions{dataDir: t.TempDir(),
		args: []string{"-log-format", "json", "-log-level", "debug", "-access-log"}})
	c, _ := countingClient(t, p)
	res := runWorkload(t, c)
	if code := p.terminate(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
	for _, id := range res.requestIDs {
		if !p.stderr.contains(`"request_id":"` + id + `"`) {
			t.Errorf("no log line with request id %s", id)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(p.stderr.String()), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Errorf("not a JSON line: %q", line)
		}
	}
	checkNoSecrets(t, p, res.secrets)
}

// checkNoSecrets fails the test when any line the child wrote holds one
// of the secrets, or an Authorization or Cookie header.
func checkNoSecrets(t *testing.T, p *proc, secrets workloadSecrets) {
	t.Helper()
	all := p.stdout.String() + p.stderr.String()
	if n := strings.Count(all, "\n"); n < 5 {
		t.Fatalf("only %d lines logged: the check would be empty", n)
	}
	for _, s := range secrets {
		if s == "" {
			t.Fatal("an empty secret")
		}
		if strings.Contains(all, s) {
			t.Errorf("a log line holds a secret of the workload (%d characters, starting %.4q)", len(s), s)
		}
	}
	for _, h := range []string{"Bearer ", "session=", "Authorization", "Cookie"} {
		if strings.Contains(all, h) {
			t.Errorf("a log line holds %q", h)
		}
	}
}

// sameDecimal compares two decimal texts ignoring trailing zeros after the
// point.
func sameDecimal(a, b string) bool {
	trim := func(s string) string {
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		return s
	}
	return trim(a) == trim(b)
}

// rawRequest sends one request written by hand (for what net/http refuses
// to send) on a connection of its own and returns the answer; the request
// counts as one for the metrics.
func rawRequest(t *testing.T, base, request string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer to %q: %v", request, err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp
}

// TestMetricsAddr checks -metrics-addr: /metrics and /debug/pprof/ on their
// own listener, neither on the main one.
func TestMetricsAddr(t *testing.T) {
	p := startProc(t, "metrics-addr", procOptions{dataDir: t.TempDir(), args: []string{"-metrics-addr", "127.0.0.1:0"}})
	line, err := p.stderr.waitFor(metricsListeningRE.MatchString, startTimeout)
	if err != nil {
		t.Fatalf("no metrics listening line: %v", err)
	}
	side := "http://" + metricsListeningRE.FindStringSubmatch(line)[1]
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	front := "http://" + p.addr
	for _, c := range []struct {
		url    string
		status int
		holds  string
	}{
		{front + "/metrics", 404, ""},
		{front + "/debug/pprof/", 404, ""},
		{front + "/readyz", 200, "ready"},
		{side + "/metrics", 200, "marketd_ready 1"},
		{side + "/debug/pprof/", 200, "goroutine"},
		{side + "/debug/pprof/goroutine?debug=1", 200, "goroutine profile"},
	} {
		if status, body := get(c.url); status != c.status || !strings.Contains(body, c.holds) {
			t.Errorf("GET %s: status %d, want %d holding %q; body %.200s", c.url, status, c.status, c.holds, body)
		}
	}
	if code := p.terminate(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
}

var metricsListeningRE = regexp.MustCompile(`msg="metrics listening" addr=(\S+)`)
