package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The dashboard, the alert rules and the metrics checked by Prometheus' own
// tools: promtool on a real scrape and on the rules, and a real Prometheus
// server scraping marketd every second during a workload
// (docs/OPERATIONS.md, "Checked by the tests").

const (
	dashboardPath = "../../docs/grafana/marketd.json"
	alertsPath    = "../../docs/prometheus/alerts.yml"
	// requirePrometheusEnv, set to 1 by .ci/run once the Debian package
	// prometheus is installed, turns a missing prometheus or promtool into
	// a failure instead of a skip.
	requirePrometheusEnv = "MARKETD_REQUIRE_PROMETHEUS"
	// promWait bounds each wait on the Prometheus server: its start, and
	// its scrapes catching up with the workload (one a second).
	promWait = 60 * time.Second
)

// prometheusTools returns the paths of promtool and prometheus, or skips the
// test with one message when the package is not installed here.
func prometheusTools(t *testing.T) (promtool, prometheus string) {
	t.Helper()
	var missing []string
	paths := map[string]string{}
	for _, name := range []string{"promtool", "prometheus"} {
		p, err := exec.LookPath(name)
		if err != nil {
			missing = append(missing, name)
		}
		paths[name] = p
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("%s not installed: install the Debian package prometheus (apt-get install prometheus; .ci/run does)",
			strings.Join(missing, " and "))
		if os.Getenv(requirePrometheusEnv) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return paths["promtool"], paths["prometheus"]
}

// TestPromtoolRules checks the alert rules with promtool check rules.
func TestPromtoolRules(t *testing.T) {
	promtool, _ := prometheusTools(t)
	out, err := exec.Command(promtool, "check", "rules", alertsPath).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules %s: %v\n%s", alertsPath, err, out)
	}
}

// TestPrometheus scrapes marketd with a real Prometheus during a workload,
// then queries it: the trade counter at the value sent, a latency quantile
// that is a number, and every expression of the dashboard (its variables
// substituted) and of the alert rules (with bool, so that a rule that does
// not fire still returns its series) non-empty. It also runs promtool check
// metrics on a real scrape, and checks that every metric those expressions
// name is in it.
func TestPrometheus(t *testing.T) {
	promtool, prometheus := prometheusTools(t)
	p := startProc(t, "scraped", procOptions{dataDir: t.TempDir(), args: []string{"-snapshot-every", "1s"}})
	dir := t.TempDir()
	alerts, err := filepath.Abs(alertsPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %q
scrape_configs:
  - job_name: marketd
    static_configs:
      - targets: [%q]
`, alerts, p.addr)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(t, prometheus, cfgPath, filepath.Join(dir, "data"))

	// One scrape before the workload, so that every rate has a start.
	prom.waitFor(t, `up{job="marketd"} == 1`, func(v float64) bool { return v == 1 })
	c, _ := countingClient(t, p)
	res := runWorkload(t, c)
	trades := 0
	for _, n := range res.trades {
		trades += n
	}
	// The trade counter at the value sent, and two scrapes after it, so
	// that every rate over the workload has its end.
	prom.waitFor(t, `sum(marketd_trades_total{job="marketd"})`, func(v float64) bool { return v == float64(trades) })
	seen := prom.scalar(t, `timestamp(marketd_ready{job="marketd"})`)
	prom.waitFor(t, `timestamp(marketd_ready{job="marketd"})`, func(v float64) bool { return v >= seen+2 })
	q := `histogram_quantile(0.5, sum by (le) (rate(marketd_http_request_duration_seconds_bucket{job="marketd",route="/api/markets/trade"}[1m])))`
	if v := prom.scalar(t, q); math.IsNaN(v) || v <= 0 {
		t.Errorf("%s = %v, want a positive number", q, v)
	}

	scraped, body := scrape(t, c.base+"/metrics")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}

	exprs := dashboardExprs(t)
	rules := prom.ruleExprs(t)
	if len(rules) == 0 {
		t.Fatal("Prometheus loaded no alert rule")
	}
	for _, r := range rules {
		exprs = append(exprs, alertExprWithBool(t, r))
	}
	for _, e := range exprs {
		if n := len(prom.query(t, e)); n == 0 {
			t.Errorf("empty result for %s", e)
		}
		for _, name := range metricNames(e) {
			if !inScrape(scraped, name) {
				t.Errorf("%s names %s, which a scrape does not hold", e, name)
			}
		}
	}
}

// dashboardExprs returns every PromQL expression of the dashboard's panels,
// with its variables substituted: the job, every instance, and a rate
// interval of one minute.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		SchemaVersion int `json:"schemaVersion"`
		Templating    struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []dashPanel `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	if dash.SchemaVersion == 0 || len(dash.Templating.List) == 0 || dash.Templating.List[0].Type != "datasource" {
		t.Fatalf("%s: want a schemaVersion and a datasource variable first", dashboardPath)
	}
	if regexp.MustCompile(`"uid":\s*"[^"$]`).Match(b) && !regexp.MustCompile(`"uid":\s*"marketd-overview"`).Match(b) {
		t.Errorf("%s: a hard-coded datasource uid", dashboardPath)
	}
	subst := strings.NewReplacer("$__rate_interval", "1m", "${job}", "marketd", "$job", "marketd", "${instance}", ".*", "$instance", ".*")
	var exprs []string
	var walk func([]dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				e := subst.Replace(tg.Expr)
				if strings.Contains(e, "$") {
					t.Errorf("panel %q: a variable left in %s", p.Title, e)
				}
				exprs = append(exprs, e)
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	if len(exprs) < 20 {
		t.Fatalf("%s: only %d expressions", dashboardPath, len(exprs))
	}
	return exprs
}

type dashPanel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"`
}

// alertComparison is the comparison that ends every alert expression.
var alertComparison = regexp.MustCompile(`\s(==|!=|>=|<=|>|<)\s*(-?[0-9][0-9.e+-]*)\s*$`)

// alertExprWithBool turns an alert's "expr > N" into "expr > bool N": the
// same series, each 0 or 1, so that a rule that does not fire still
// returns every series it reads.
func alertExprWithBool(t *testing.T, e string) string {
	t.Helper()
	if !alertComparison.MatchString(e) {
		t.Errorf("alert expression %q does not end in a comparison with a number", e)
		return e
	}
	return alertComparison.ReplaceAllString(e, " $1 bool $2")
}

// metricNameRE finds the metric names of an expression: marketd's, the Go
// and process collectors'.
var metricNameRE = regexp.MustCompile(`\b(?:marketd|process|go)_[a-z0-9_]+\b`)

func metricNames(e string) []string { return metricNameRE.FindAllString(e, -1) }

// inScrape reports whether the scrape has a sample of the metric name (a
// histogram's _bucket, _sum and _count samples included).
func inScrape(s map[string]float64, name string) bool {
	for k := range s {
		if k == name || strings.HasPrefix(k, name+"{") {
			return true
		}
	}
	return false
}

// promServer is a Prometheus server run by a test.
type promServer struct {
	base string
	hc   *http.Client
}

// startPrometheus starts prometheus with cfg and its data under dataDir on
// a free loopback port, and waits until it is ready; it is killed at the
// end of the test.
func startPrometheus(t *testing.T, bin, cfg, dataDir string) *promServer {
	t.Helper()
	// Prometheus takes an address, not a listener: pick a free port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+dataDir,
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("prometheus output:\n%s", out.String())
		}
	})
	ps := &promServer{base: "http://" + addr, hc: &http.Client{Timeout: 10 * time.Second}}
	deadline := time.Now().Add(promWait)
	for {
		resp, err := ps.hc.Get(ps.base + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return ps
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("prometheus exited: %v\n%s", err, out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready within %v\n%s", promWait, out.String())
		}
	}
}

// promResult is one series of an instant query's answer.
type promResult struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query evaluates e now and returns its series; an error answer fails the
// test.
func (ps *promServer) query(t *testing.T, e string) []promResult {
	t.Helper()
	resp, err := ps.hc.Get(ps.base + "/api/v1/query?query=" + url.QueryEscape(e))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promResult `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &ans); err != nil || ans.Status != "success" {
		t.Fatalf("query %s: status %d, %v %s: %s", e, resp.StatusCode, err, ans.Error, b)
	}
	if ans.Data.ResultType != "vector" {
		t.Fatalf("query %s: result type %s, want vector", e, ans.Data.ResultType)
	}
	return ans.Data.Result
}

// scalar evaluates e, which must give one series, and returns its value.
func (ps *promServer) scalar(t *testing.T, e string) float64 {
	t.Helper()
	v, err := value(ps.query(t, e))
	if err != nil {
		t.Fatalf("query %s: %v", e, err)
	}
	return v
}

func value(rs []promResult) (float64, error) {
	if len(rs) != 1 {
		return 0, fmt.Errorf("%d series, want 1", len(rs))
	}
	s, ok := rs[0].Value[1].(string)
	if !ok {
		return 0, errors.New("a value that is not a string")
	}
	return strconv.ParseFloat(s, 64)
}

// waitFor evaluates e every 200 ms until it gives one series whose value
// satisfies ok, or fails the test after promWait.
func (ps *promServer) waitFor(t *testing.T, e string, ok func(float64) bool) {
	t.Helper()
	deadline := time.Now().Add(promWait)
	var last string
	for {
		rs := ps.query(t, e)
		v, err := value(rs)
		if err == nil && ok(v) {
			return
		}
		last = fmt.Sprintf("%v (%v)", v, err)
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %s after %v", e, last, promWait)
		}
		time.Sleep(200 * time.Millisecond) // Prometheus scrapes once a second
	}
}

// ruleExprs returns the expression of every rule Prometheus loaded.
func (ps *promServer) ruleExprs(t *testing.T) []string {
	t.Helper()
	resp, err := ps.hc.Get(ps.base + "/api/v1/rules")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans struct {
		Status string `json:"status"`
		Data   struct {
			Groups []struct {
				Rules []struct {
					Name   string `json:"name"`
					Query  string `json:"query"`
					Health string `json:"health"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || ans.Status != "success" {
		t.Fatalf("GET /api/v1/rules: %v, status %q", err, ans.Status)
	}
	var exprs []string
	for _, g := range ans.Data.Groups {
		for _, r := range g.Rules {
			if r.Health == "err" {
				t.Errorf("rule %s: health %s", r.Name, r.Health)
			}
			exprs = append(exprs, r.Query)
		}
	}
	return exprs
}
