package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain runs this test binary as the baselines' child when a test's
// marketd-load starts one (startBaselineProcess runs its own executable,
// here the test binary, with -serve-baselines).
func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == "-serve-baselines" {
		main()
		return
	}
	os.Exit(m.Run())
}

func TestParseConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		bad  string // a part of the error, "" for none
	}{
		{"spawn", []string{"-spawn", "bin/marketd"}, ""},
		{"addr", []string{"-addr", "127.0.0.1:8080"}, ""},
		{"url", []string{"-addr", "http://127.0.0.1:8080/"}, ""},
		{"https", []string{"-addr", "https://example.com"}, "-addr"},
		{"neither", nil, "one of -addr and -spawn"},
		{"both", []string{"-addr", "x:1", "-spawn", "y"}, "one of -addr and -spawn"},
		{"fewer bots than conns", []string{"-spawn", "m", "-conns", "8", "-bots", "4"}, "-bots"},
		{"compare without data", []string{"-addr", "x:1", "-compare"}, "-data"},
		{"bad mix", []string{"-spawn", "m", "-mix", "buy=x"}, "mix"},
		{"bad skew", []string{"-spawn", "m", "-skew", "pareto"}, "skew"},
		{"negative rate", []string{"-spawn", "m", "-rate", "-1"}, "-rate"},
		{"extra argument", []string{"-spawn", "m", "now"}, "unexpected"},
		{"accounts", []string{"-spawn", "m", "-accounts", "1000000", "-snapshot-every", "15s", "-trace", "/tmp/x"}, ""},
		{"accounts without spawn", []string{"-addr", "x:1", "-accounts", "10"}, "-accounts"},
		{"too many accounts", []string{"-spawn", "m", "-accounts", "10000001"}, "-accounts"},
		{"negative snapshot interval", []string{"-spawn", "m", "-snapshot-every", "-1s"}, "-snapshot-every"},
		{"trace without spawn", []string{"-addr", "x:1", "-trace", "/tmp/x"}, "-trace"},
		{"no spare processors", []string{"-spawn", "m", "-spare-procs", "0"}, ""},
		{"negative spare processors", []string{"-spawn", "m", "-spare-procs", "-1"}, "-spare-procs"},
		{"baselines in process", []string{"-spawn", "m", "-compare", "-baselines", "in-process"}, ""},
		{"least record bytes", []string{"-spawn", "m", "-compare", "-least-record-bytes", "300"}, ""},
		{"bad least record bytes", []string{"-spawn", "m", "-compare", "-least-record-bytes", "-1"}, "-least-record-bytes"},
		{"bad baselines", []string{"-spawn", "m", "-compare", "-baselines", "thread"}, "-baselines"},
		{"floor snapshots", []string{"-spawn", "m", "-compare", "-snapshot-every", "15s", "-floor-snapshot-bytes", "1000"}, ""},
		{"floor snapshots without compare", []string{"-spawn", "m", "-snapshot-every", "15s", "-floor-snapshot-bytes", "1000"}, "-floor-snapshot-bytes"},
		{"floor snapshots without period", []string{"-spawn", "m", "-compare", "-floor-snapshot-bytes", "1000"}, "-floor-snapshot-bytes"},
		{"floor snapshots spread", []string{"-spawn", "m", "-compare", "-snapshot-every", "15s", "-floor-snapshot-bytes", "1000", "-floor-snapshot-spread", "2s"}, ""},
		{"pauses", []string{"-spawn", "m", "-compare", "-pause-every", "10s", "-pause-for", "60ms"}, ""},
		{"pauses without spawn", []string{"-addr", "x:1", "-pause-every", "10s", "-pause-for", "60ms"}, "-pause-every needs -spawn"},
		{"pauses of handlers in process", []string{"-spawn", "m", "-compare", "-baselines", "in-process", "-pause-every", "10s", "-pause-for", "60ms"}, "-baselines process"},
		{"pause without length", []string{"-spawn", "m", "-pause-every", "10s"}, "a pause of 0s"},
		{"pause length without period", []string{"-spawn", "m", "-pause-for", "60ms"}, "no period"},
		{"pause longer than its period", []string{"-spawn", "m", "-pause-every", "50ms", "-pause-for", "60ms"}, "each must end before the next"},
		{"pause too long", []string{"-spawn", "m", "-pause-every", "1m", "-pause-for", "3s"}, "a pause of 3s"},
		{"pause over the timeout", []string{"-spawn", "m", "-pause-every", "1m", "-pause-for", "1s", "-timeout", "500ms"}, "not under -timeout"},
		{"floor snapshots spread past the period", []string{"-spawn", "m", "-compare", "-snapshot-every", "15s", "-floor-snapshot-bytes", "1000", "-floor-snapshot-spread", "15s"}, "-floor-snapshot-spread"},
		{"negative floor snapshots", []string{"-spawn", "m", "-compare", "-snapshot-every", "15s", "-floor-snapshot-bytes", "-1"}, "-floor-snapshot-bytes"},
		{"serve baselines", []string{"-serve-baselines", "/tmp"}, ""},
		{"serve baselines with more", []string{"-serve-baselines", "/tmp", "-conns", "3"}, "-serve-baselines"},
		{"serve baselines with an interval", []string{"-serve-baselines", "/tmp", "-floor-commit-interval", "1ms"}, ""},
		{"serve baselines with an interval and more", []string{"-serve-baselines", "/tmp", "-floor-commit-interval", "1ms", "-conns", "3"}, "-serve-baselines"},
		{"serve baselines with a bad interval", []string{"-serve-baselines", "/tmp", "-floor-commit-interval", "11ms"}, "-floor-commit-interval"},
		{"serve baselines with a ballast", []string{"-serve-baselines", "/tmp", "-floor-commit-interval", "1ms", "-floor-ballast-bytes", "1000"}, ""},
		{"serve baselines holding the processor", []string{"-serve-baselines", "/tmp", "-floor-commit-interval", "1ms", "-floor-fsync-holds-processor=true", "-floor-ballast-bytes", "0"}, ""},
		{"serve baselines with a bad ballast", []string{"-serve-baselines", "/tmp", "-floor-ballast-bytes", "-1"}, "-floor-ballast-bytes"},
		{"floor ballast", []string{"-spawn", "m", "-compare", "-floor-ballast-bytes", "800000000"}, ""},
		{"floor ballast too large", []string{"-spawn", "m", "-compare", "-floor-ballast-bytes", "17179869185"}, "-floor-ballast-bytes"},
		{"floor ballast in process", []string{"-spawn", "m", "-compare", "-baselines", "in-process", "-floor-ballast-bytes", "1000"}, "-baselines process"},
		{"floor commit interval", []string{"-spawn", "m", "-compare", "-floor-commit-interval", "10ms"}, ""},
		{"floor holding the processor", []string{"-spawn", "m", "-compare", "-floor-commit-interval", "1ms", "-floor-fsync-holds-processor"}, ""},
		{"floor commit interval too long", []string{"-spawn", "m", "-compare", "-floor-commit-interval", "10.1ms"}, "-floor-commit-interval"},
		{"negative floor commit interval", []string{"-spawn", "m", "-compare", "-floor-commit-interval", "-1ms"}, "-floor-commit-interval"},
		{"trace too long", []string{"-spawn", "m", "-trace", "/tmp/x", "-duration", "5m"}, "-trace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseConfig(c.args)
			switch {
			case c.bad == "" && err != nil:
				t.Errorf("parseConfig(%q): %v", c.args, err)
			case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
				t.Errorf("parseConfig(%q): error %v, want one about %s", c.args, err, c.bad)
			}
		})
	}
}

// TestCompareOnSpawnedServer runs a short -compare against a marketd of
// this tree that the tool spawns, and checks the report: three targets,
// the ratios, the invariants held, the JSON and the charts written, and
// the server run on the processors the tool and its handlers run on. Its
// floors wait between commits (-floor-commit-interval) and keep their
// processor through the fsync (-floor-fsync-holds-processor), which the
// baselines' child must accept.
func TestCompareOnSpawnedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns marketd; skipped with -short")
	}
	dir := t.TempDir()
	bin := buildMarketd(t, dir)
	jsonPath, plotDir := filepath.Join(dir, "report.json"), filepath.Join(dir, "plots")
	profPrefix, serverLog := filepath.Join(dir, "gen"), filepath.Join(dir, "server.log")
	rep := runTool(t, []string{"-spawn", bin, "-compare", "-rounds", "1", "-duration", "300ms", "-warmup", "0s",
		"-conns", "4", "-markets", "2", "-json", jsonPath, "-plot", plotDir, "-cpuprofile", profPrefix, "-progress", "off",
		"-server-log", serverLog, "-floor-commit-interval", "1ms", "-floor-fsync-holds-processor"}, jsonPath,
		"handlers wait between commits as a log with -commit-interval 1ms does", "handlers keep their processor through the fsync", "ratio marketd/noop", "ratio marketd/fsync-only", `"balance equals ledger" holds`,
		`"positions equal the answers" holds`, `"positions add up to the markets' shares" holds`)
	if len(rep.Comparison.Runs) != 3 || len(rep.Comparison.Ratios) != 2 || len(rep.Checks) != 3 {
		t.Errorf("JSON report: %d runs, %d ratios, %d checks; want 3, 2, 3", len(rep.Comparison.Runs), len(rep.Comparison.Ratios), len(rep.Checks))
	}
	checkCPU(t, rep, false)
	for _, target := range []string{"marketd", "noop", "fsync-only"} {
		if st, err := os.Stat(profPrefix + "-" + target + ".prof"); err != nil || st.Size() == 0 {
			t.Errorf("CPU profile of the load generator against %s: %v", target, err)
		}
	}
	for _, name := range []string{"load-throughput", "load-latency-marketd", "load-latency-noop", "load-latency-fsync-only"} {
		for _, ext := range []string{".png", ".svg"} {
			if st, err := os.Stat(filepath.Join(plotDir, name+ext)); err != nil || st.Size() == 0 {
				t.Errorf("chart %s%s: %v", name, ext, err)
			}
		}
	}
	logText, err := os.ReadFile(serverLog)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("msg=processors gomaxprocs=%d ", rep.Procs); rep.Procs != runtime.GOMAXPROCS(0) || !strings.Contains(string(logText), want) {
		t.Errorf("report's processors %d (this process: %d); the server's log has no %q:\n%s",
			rep.Procs, runtime.GOMAXPROCS(0), want, logText)
	}
}

// TestCompareBaselinesInProcess runs -compare with the baseline handlers
// in marketd-load's own process, and checks that their runs' CPU is
// reported as the load generator's with the handler in it.
func TestCompareBaselinesInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns marketd; skipped with -short")
	}
	dir := t.TempDir()
	bin := buildMarketd(t, dir)
	jsonPath := filepath.Join(dir, "report.json")
	rep := runTool(t, []string{"-spawn", bin, "-compare", "-baselines", "in-process", "-rounds", "1", "-duration", "300ms",
		"-warmup", "0s", "-conns", "4", "-markets", "2", "-mix", "buy=1,sell=1", "-json", jsonPath, "-progress", "off"}, jsonPath,
		"ratio marketd/fsync-only", "ratio marketd/least-trade", "load generator with the handler in it")
	checkCPU(t, rep, true)
	checkLeastTrade(t, rep)
}

// TestCompareFloorSnapshots runs -compare with files written beside the
// floors every 300 ms, and checks that each floor's runs have their
// writes marked, as marketd's have its snapshots, and that the files are
// gone after.
func TestCompareFloorSnapshots(t *testing.T) {
	dir, bin, data := spawnDataDir(t)
	jsonPath := filepath.Join(dir, "report.json")
	rep := runTool(t, []string{"-spawn", bin, "-data", data, "-compare", "-rounds", "1", "-duration", "1s", "-warmup", "0s",
		"-snapshot-every", "300ms", "-floor-snapshot-bytes", "3000000", "-floor-snapshot-spread", "50ms", "-rate", "200", "-conns", "4", "-markets", "2",
		"-mix", "buy=1,sell=1", "-json", jsonPath, "-progress", "off"}, jsonPath, "seconds with a snapshot:")
	for _, r := range rep.Comparison.Runs {
		if len(r.Snapshots) == 0 || r.DuringSnapshots == nil {
			t.Errorf("run of %s: %d snapshots marked, latency during them %v; want some", r.Target, len(r.Snapshots), r.DuringSnapshots)
		}
	}
	left, err := filepath.Glob(filepath.Join(dir, "marketd-load-floor-snapshots-*"))
	if err != nil || len(left) != 0 {
		t.Errorf("floor snapshots left beside -data: %v, %v", left, err)
	}
}

// checkLeastTrade checks that a trades-only -compare ran the least-trade
// handler and that it answered every trade with a 2xx: it knows the run's
// keys and markets, so any error is the handler's or its setup's.
func checkLeastTrade(t *testing.T, rep report) {
	t.Helper()
	if len(rep.Comparison.Runs) != 4 || len(rep.Comparison.Ratios) != 3 {
		t.Errorf("JSON report: %d runs, %d ratios; want 4, 3 with the least-trade handler", len(rep.Comparison.Runs), len(rep.Comparison.Ratios))
	}
	for _, r := range rep.Comparison.Runs {
		if r.Target == leastTradeName && (r.Requests == 0 || r.Errors() != 0) {
			t.Errorf("least-trade run: %d requests, %d not 2xx (%v)", r.Requests, r.Errors(), r.ByStatus)
		}
	}
}

// checkCPU checks that every run of rep reports the load generator's CPU
// per request and, where the server is a process of its own (marketd
// always; the baselines unless inProcess), the server's.
func checkCPU(t *testing.T, rep report, inProcess bool) {
	t.Helper()
	for _, r := range rep.Comparison.Runs {
		wantHere := inProcess && r.Target != "marketd"
		switch c := r.CPU; {
		case c == nil:
			t.Errorf("run of %s: no CPU per request", r.Target)
		case c.LoadUs <= 0 || c.ServerInProcess != wantHere || wantHere != (c.ServerUs == nil):
			t.Errorf("run of %s: CPU per request %+v; want the load generator's, the server in it %v, else its own", r.Target, *c, wantHere)
		}
	}
}

// TestSnapshotRunOnSpawnedServer fills the spawned server's directory with
// accounts, has it take a snapshot every second during an open-loop run,
// and checks that the report marks them and the server's garbage
// collections and names the slowest requests, and that both traces were
// written.
func TestSnapshotRunOnSpawnedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and spawns marketd; skipped with -short")
	}
	dir := t.TempDir()
	bin := buildMarketd(t, dir)
	// The spawned server inherits GOGC: at 10, without the headroom, its
	// heap of a few MB is collected several times a second (the runtime's
	// least target, 4 MiB at GOGC 100, scales with it).
	t.Setenv("GOGC", "10")
	jsonPath, tracePrefix := filepath.Join(dir, "report.json"), filepath.Join(dir, "run")
	rep := runTool(t, []string{"-spawn", bin, "-accounts", "3000", "-snapshot-every", "1s", "-trace", tracePrefix,
		"-rate", "200", "-duration", "3s", "-warmup", "0s", "-conns", "4", "-markets", "2", "-mix", "buy=1,sell=1",
		"-server-args", "-gc-headroom-mib 0", "-json", jsonPath, "-progress", "off"}, jsonPath,
		"3000 accounts created", " at ", "seconds with a snapshot:", "server garbage collection",
		"seconds with a collection:", "slowest requests of marketd", "-server.trace (the server", `"balance equals ledger" holds`)
	r := rep.Comparison.Runs[0]
	if len(r.Snapshots) == 0 || r.DuringSnapshots == nil || len(r.Slowest) == 0 {
		t.Errorf("JSON report: %d snapshots, latency during them %v, %d slowest requests; want some of each",
			len(r.Snapshots), r.DuringSnapshots, len(r.Slowest))
	}
	if len(r.Collections) == 0 || r.DuringCollections == nil {
		t.Errorf("JSON report: collection windows %+v, latency during them %v; want some", r.Collections, r.DuringCollections)
	}
	for _, name := range []string{tracePrefix + "-server.trace", tracePrefix + "-client.trace"} {
		if st, err := os.Stat(name); err != nil || st.Size() == 0 {
			t.Errorf("trace %s: %v", name, err)
		}
	}
}

// buildMarketd builds the marketd of this tree into dir.
func buildMarketd(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "marketd")
	if out, err := exec.Command("go", "build", "-o", bin, "../marketd").CombinedOutput(); err != nil {
		t.Fatalf("build marketd: %v\n%s", err, out)
	}
	return bin
}

// runTool runs marketd-load with args, checks that its text report holds
// every one of wants, and returns the JSON report it wrote to jsonPath.
func runTool(t *testing.T, args []string, jsonPath string, wants ...string) report {
	t.Helper()
	cfg, err := parseConfig(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("report without %q:\n%s", want, text)
		}
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, raw)
	}
	return rep
}

// TestSpawnAgainOnItsData spawns marketd twice on the same -data with the
// same -admin-password: the second run logs in as the admin the first
// start made, so a directory can be measured again.
func TestSpawnAgainOnItsData(t *testing.T) {
	dir, bin, data := spawnDataDir(t)
	for run := range 2 {
		jsonPath := filepath.Join(dir, fmt.Sprintf("report-%d.json", run))
		rep := runTool(t, []string{"-spawn", bin, "-data", data, "-admin-password", "s3cond-start-pass", "-duration", "200ms",
			"-warmup", "0s", "-conns", "2", "-markets", "1", "-mix", "buy=1,sell=1", "-json", jsonPath, "-progress", "off"}, jsonPath)
		if len(rep.Comparison.Runs) != 1 || rep.Comparison.Runs[0].Requests == 0 {
			t.Fatalf("run %d: %+v; want one run with requests", run, rep.Comparison.Runs)
		}
	}
}

// spawnDataDir skips with -short, else builds marketd into a temporary
// directory and makes a data directory in it for -data.
func spawnDataDir(t *testing.T) (dir, bin, data string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and spawns marketd; skipped with -short")
	}
	dir = t.TempDir()
	bin = buildMarketd(t, dir)
	data = filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o750); err != nil {
		t.Fatal(err)
	}
	return dir, bin, data
}
