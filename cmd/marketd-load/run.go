package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/google/uuid"

	"marketd/bench/baseline"
	"marketd/bench/chart"
	"marketd/bench/client"
	"marketd/bench/load"
	"marketd/bench/populate"
	"marketd/bench/spawn"
	"marketd/core/money"
	"marketd/internal/fstype"
	"marketd/internal/procs"
)

const (
	// spawnSignupBonusKP funds each bot for any run: a one-share buy costs
	// under 1 KP.
	spawnSignupBonusKP = 1_000_000
	// stopTimeout bounds the spawned server's clean stop.
	stopTimeout = time.Minute
	// readyTimeout bounds the spawned server's start: a recovery of
	// several million accounts included.
	readyTimeout = 3 * time.Minute
	// metricsScrapeEvery is how often the server's /metrics is scraped for
	// its snapshots and its garbage collections: a snapshot of 1,000,000
	// accounts takes seconds, a collection's window is no finer than
	// this, and a scrape costs the server well under a millisecond of CPU.
	metricsScrapeEvery = 250 * time.Millisecond
)

// report is the JSON report.
type report struct {
	StartedAt  time.Time          `json:"started_at"`
	Server     string             `json:"server"`
	Mode       string             `json:"mode"`
	Conns      int                `json:"conns"`
	Rate       float64            `json:"rate,omitempty"`
	Bots       int                `json:"bots"`
	Markets    int                `json:"markets"`
	Mix        string             `json:"mix"`
	Skew       string             `json:"skew"`
	Seed       uint64             `json:"seed"`
	Duration   string             `json:"duration"`
	Warmup     string             `json:"warmup"`
	CPUs       int                `json:"cpus"`
	Procs      int                `json:"gomaxprocs"`
	GoVersion  string             `json:"go_version"`
	Comparison *load.Comparison   `json:"comparison"`
	Checks     []load.CheckResult `json:"checks"`
}

func run(ctx context.Context, cfg config, out io.Writer) (err error) {
	started := time.Now().UTC()
	nprocs := runtime.GOMAXPROCS(0) // main's setProcs chose it
	addr, dataDir, adminPassword := cfg.addr, cfg.dataDir, cfg.adminPassword
	if adminPassword == "" {
		adminPassword = os.Getenv("MARKETD_ADMIN_PASSWORD")
	}
	server, metricsAddr := addr, addr
	serverPid := 0
	if cfg.spawn != "" {
		p, dir, pw, cleanup, err := spawnServer(ctx, cfg, nprocs, out)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, cleanup()) }()
		addr, dataDir, adminPassword = p.Addr(), dir, pw
		server = fmt.Sprintf("%s (spawned, pid %d, data %s)", cfg.spawn, p.Pid(), dir)
		metricsAddr, serverPid = addr, p.Pid()
		if a := p.MetricsAddr(); a != "" {
			metricsAddr = a
		}
	}
	c := client.New(addr, cfg.conns, cfg.timeout)
	defer c.Close()
	fmt.Fprintf(out, "marketd-load: %s loop, %d connections, %d bots, %d markets, mix %s, skew %s, seed %d; %d processors (GOMAXPROCS) on %d CPUs; server %s\n",
		mode(cfg), cfg.conns, cfg.bots, cfg.markets, cfg.mix, cfg.skew, cfg.seed, nprocs, runtime.NumCPU(), server)
	if cfg.compare && cfg.floors.commitInterval > 0 {
		fmt.Fprintf(out, "marketd-load: the fsync-only and least-trade handlers wait between commits as a log with -commit-interval %v does\n", cfg.floors.commitInterval)
	}
	if cfg.compare && cfg.floors.holdProcessor {
		fmt.Fprintln(out, "marketd-load: the fsync-only and least-trade handlers keep their processor through the fsync, as marketd's log does with a spare processor")
	}
	if cfg.compare && cfg.floors.ballastBytes > 0 {
		fmt.Fprintf(out, "marketd-load: the handlers' process holds %d bytes it does not touch\n", cfg.floors.ballastBytes)
	}
	fx, err := load.Setup(ctx, c, load.SetupOptions{Bots: cfg.bots, Markets: cfg.markets, AdminPassword: adminPassword})
	if err != nil {
		return err
	}
	if fx.Throttled {
		fmt.Fprintln(out, "marketd-load: warning: the bots' keys are not of the unlimited tier (the server's -default-tier); rate limits may refuse requests")
	}
	o, err := loadOptions(cfg)
	if err != nil {
		return err
	}
	var tr *tracer
	if cfg.tracePrefix != "" {
		tr = newTracer(cfg.tracePrefix, metricsAddr, cfg.duration, cfg.baselines == baselinesInProcess, out)
		o.Measured = tr.measured
	}
	var prof *profiler
	if cfg.profilePrefix != "" {
		prof = newProfiler(cfg.profilePrefix, out)
		o.Measured = both(o.Measured, prof.measured)
	}
	watch := load.WatchMetrics(metricsAddr, metricsScrapeEvery)
	marketd := load.NewTarget(marketdName, c, fx)
	marketd.ServerPid = serverPid
	cmp, err := measure(ctx, cfg, marketd, fx, dataDir, o)
	err = errors.Join(err, markWatched(cfg, out, watch, cmp, marketd.Name))
	if tr != nil {
		err = errors.Join(err, tr.err())
	}
	if prof != nil {
		err = errors.Join(err, prof.err())
	}
	if err != nil {
		return err
	}
	return report{StartedAt: started, Server: server, Mode: mode(cfg), Conns: cfg.conns, Rate: cfg.rate,
		Bots: cfg.bots, Markets: cfg.markets, Mix: cfg.mix.String(), Skew: o.Skew.String(), Seed: cfg.seed,
		Duration: cfg.duration.String(), Warmup: cfg.warmup.String(), CPUs: runtime.NumCPU(), Procs: nprocs,
		GoVersion: runtime.Version(), Comparison: cmp}.write(cfg, out, marketd)
}

// markWatched stops watch and marks in cmp (nil: nothing to mark) the
// server's garbage collections and, with -snapshot-every, its snapshots.
// Its scrapes failing fails the run only with -snapshot-every, which asks
// for the snapshots: without it the server's /metrics may be elsewhere
// (-addr to a server with -metrics-addr), and the run only lacks the
// collections, which a line says.
func markWatched(cfg config, out io.Writer, watch *load.MetricsWatch, cmp *load.Comparison, target string) error {
	werr := watch.Stop()
	switch {
	case werr != nil && cfg.snapshotEvery > 0:
		return werr
	case werr != nil:
		fmt.Fprintf(out, "marketd-load: the server's garbage collections may be missing: %v\n", werr)
	}
	if cmp == nil {
		return nil
	}
	if cfg.snapshotEvery > 0 {
		cmp.MarkSnapshots(target, watch.Snapshots())
	}
	cmp.MarkCollections(target, watch.Collections())
	return nil
}

// write prints the comparison and the invariant checks, writes the JSON
// report and the charts that cfg asks for, and fails when an invariant
// does not hold.
func (rep report) write(cfg config, out io.Writer, marketd *load.Target) error {
	if err := rep.Comparison.WriteText(out); err != nil {
		return err
	}
	checks, failed := checkInvariants(out, marketd)
	rep.Checks = checks
	if cfg.jsonPath != "" {
		if err := writeJSON(cfg.jsonPath, rep); err != nil {
			return err
		}
	}
	if cfg.plotDir != "" {
		if err := plot(cfg, rep.Skew, rep.Comparison); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d invariants violated", failed)
	}
	return nil
}

// loadOptions returns the load's options as cfg gives them, before any
// tracing or profiling.
func loadOptions(cfg config) (load.Options, error) {
	skew, err := load.NewSkew(cfg.skew, cfg.markets, cfg.hotShare, cfg.zipfS)
	if err != nil {
		return load.Options{}, err
	}
	o := load.Options{Conns: cfg.conns, Duration: cfg.duration, Rate: cfg.rate, Mix: cfg.mix, Skew: skew, Seed: cfg.seed,
		Pauses: cfg.pauses}
	if cfg.sync {
		o.Settle = syncDisks
	}
	if showProgress(cfg.progress) {
		o.Progress = os.Stderr
	}
	return o, nil
}

// marketdName is the target name of marketd itself.
const marketdName = "marketd"

// measure runs the load against marketd alone (after its warm-up), or with
// -compare in alternating rounds against the baselines, beside the floor
// snapshots that cfg asks for (floorSnapshots).
func measure(ctx context.Context, cfg config, marketd *load.Target, fx *load.Fixture, dataDir string, o load.Options) (*load.Comparison, error) {
	if cfg.compare {
		fsnap, err := newFloorSnapshots(cfg, dataDir)
		if err != nil {
			return nil, err
		}
		if fsnap != nil {
			defer func() { _ = fsnap.close() }()
			o.Measured = both(o.Measured, fsnap.measured)
		}
		targets, closeAll, err := baselineTargets(cfg, fx, dataDir)
		if err != nil {
			return nil, err
		}
		cmp, err := load.Compare(ctx, append([]*load.Target{marketd}, targets...), cfg.rounds, cfg.warmup, o)
		err = errors.Join(err, closeAll())
		if fsnap != nil {
			err = errors.Join(err, fsnap.mark(cmp), fsnap.close())
		}
		return cmp, err
	}
	if cfg.warmup > 0 {
		var w load.Options
		w, o = o.Warmup(cfg.warmup)
		if _, err := load.Run(ctx, marketd, w); err != nil {
			return nil, err
		}
	}
	r, err := load.Run(ctx, marketd, o)
	if err != nil {
		return nil, err
	}
	return load.Single(r), nil
}

// checkInvariants checks the server's invariants through the API after the
// run, prints each verdict, and returns them with the number violated.
func checkInvariants(out io.Writer, marketd *load.Target) ([]load.CheckResult, int) {
	checks := load.Check(marketd)
	failed := 0
	for _, ch := range checks {
		verdict := "holds"
		if !ch.OK {
			verdict, failed = "VIOLATED", failed+1
		}
		fmt.Fprintf(out, "invariant %q %s: %s\n", ch.Name, verdict, ch.Detail)
	}
	return checks, failed
}

func mode(cfg config) string {
	if cfg.rate > 0 {
		return "open"
	}
	return "closed"
}

// showProgress says whether to print the live progress line: with auto,
// only when stderr is a terminal.
func showProgress(setting string) bool {
	switch setting {
	case "on":
		return true
	case "off":
		return false
	}
	st, err := os.Stderr.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// spawnServer starts marketd on a loopback port and a data directory (a
// new temporary one unless -data; filled first with -accounts), with fsync
// on, keys of the unlimited tier, no anonymous rate limit and the admin
// password of -admin-password or else a generated one (marketd sets it
// only on a directory's first start), on nprocs processors (GOMAXPROCS: the count this process
// and its baseline handlers run on, whatever the binary's own default), and
// waits until it is ready. cleanup stops it and removes a temporary
// directory.
func spawnServer(ctx context.Context, cfg config, nprocs int, out io.Writer) (*spawn.Process, string, string, func() error, error) {
	dir, temporary := cfg.dataDir, false
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "marketd-load-"); err != nil {
			return nil, "", "", nil, fmt.Errorf("create the data directory: %w", err)
		}
		temporary = true
	}
	if fs, inMemory, err := fstype.Of(dir); err != nil {
		return nil, "", "", nil, err
	} else if inMemory {
		return nil, "", "", nil, fmt.Errorf("data directory %s is on %s, where fsync costs nothing; set TMPDIR or -data to a directory on disk", dir, fs)
	}
	if cfg.accounts > 0 {
		if err := populateDir(ctx, dir, cfg.accounts, out); err != nil {
			if temporary {
				err = errors.Join(err, os.RemoveAll(dir))
			}
			return nil, "", "", nil, err
		}
	}
	password := cfg.adminPassword
	if password == "" {
		var pw [12]byte
		_, _ = rand.Read(pw[:])
		password = hex.EncodeToString(pw[:])
	}
	logPath := cfg.serverLog
	if logPath == "" {
		logPath = filepath.Join(dir, "marketd.log")
	}
	args := spawnArgs()
	if cfg.snapshotEvery > 0 {
		args = append(args, "-snapshot-every", cfg.snapshotEvery.String())
	}
	if cfg.tracePrefix != "" {
		args = append(args, "-metrics-addr", "127.0.0.1:0")
	}
	args = append(args, cfg.serverArgs...)
	sctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	p, err := spawn.Start(sctx, spawn.Options{Binary: cfg.spawn, DataDir: dir, Args: args, LogPath: logPath,
		Env: []string{procs.EnvVar + "=" + strconv.Itoa(nprocs)}, AdminPassword: password})
	if err == nil {
		_, err = p.WaitReady(sctx)
		if err != nil {
			err = errors.Join(err, p.Kill())
		}
	}
	if err != nil {
		return nil, "", "", nil, fmt.Errorf("%w (its output: %s)", err, logPath)
	}
	cleanup := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		err := p.Stop(sctx)
		if err == nil && temporary {
			err = os.RemoveAll(dir)
		}
		return err
	}
	return p, dir, password, cleanup, nil
}

// populateDir fills dir with accounts (package populate) and says so.
func populateDir(ctx context.Context, dir string, accounts int, out io.Writer) error {
	fmt.Fprintf(out, "marketd-load: filling %s with %d accounts\n", dir, accounts)
	res, err := populate.Accounts(ctx, populate.Options{Dir: dir, Accounts: accounts})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "marketd-load: %d accounts created in %v, their snapshot (%d bytes, %d chunks) written in %v, every file fsynced in %v\n",
		res.Accounts, res.Created.Round(time.Millisecond), res.SnapshotBytes, res.Snapshot.Chunks,
		res.SnapshotTook.Round(time.Millisecond), res.Synced.Round(time.Millisecond))
	// The accounts' state is garbage now: collect it and give its memory
	// back before the measurement, so that the load generator neither
	// carries gigabytes of heap nor returns them during the run.
	debug.FreeOSMemory()
	return nil
}

// spawnArgs are the flags of a spawned marketd: durable (fsync on), with
// nothing of the server's own limits in the way of the load, all of whose
// connections, registrations and logins come from one loopback address.
// The admin's password goes in its environment (spawn.Options).
func spawnArgs() []string {
	return append([]string{
		"-fsync", "always",
		"-default-tier", "unlimited",
		"-signup-bonus", strconv.Itoa(spawnSignupBonusKP),
		"-password-cost", "4",
	}, spawn.UnlimitedClientArgs...)
}

// baselineTargets serves the no-op, the fsync-only and the least-trade
// handlers (their files in dataDir; the last a target only when the mix
// is buys and sells) on loopback ports, in a process of their own unless
// -baselines in-process, as targets of the fixture's load.
func baselineTargets(cfg config, fx *load.Fixture, dataDir string) ([]*load.Target, func() error, error) {
	if err := writeLeastSetup(fx, dataDir, cfg.leastRecordBytes); err != nil {
		return nil, nil, err
	}
	var bs *baselineServer
	var err error
	if cfg.baselines == baselinesInProcess {
		bs, err = serveBaselinesHere(dataDir, cfg.floors)
	} else {
		// On this process's count, which the spawned marketd runs on too
		// (run's nprocs).
		bs, err = startBaselineProcess(dataDir, runtime.GOMAXPROCS(0), cfg.floors)
	}
	// The handlers have read their setup once started (or failed): it is
	// not left in dataDir, which with -spawn -data is marketd's own.
	if rmErr := os.Remove(filepath.Join(dataDir, baseline.LeastSetupFile)); rmErr != nil {
		err = errors.Join(err, fmt.Errorf("remove the least-trade setup: %w", rmErr))
		if bs != nil {
			err = errors.Join(err, bs.close())
		}
	}
	if err != nil {
		return nil, nil, err
	}
	var targets []*load.Target
	for _, name := range baselineNames {
		if name == leastTradeName && !cfg.mix.TradesOnly() {
			continue // it answers trades only: against another mix it would only count errors
		}
		t := load.NewTarget(name, client.New(bs.addrs[name], cfg.conns, cfg.timeout), fx)
		t.ServerPid, t.ServerInProcess = bs.pid, bs.pid == 0
		targets = append(targets, t)
	}
	return targets, bs.close, nil
}

// writeLeastSetup writes the least-trade handler's setup to dataDir: the
// fixture's keys (by their hashes) and markets, and the balance the
// spawned marketd gives each bot, and recordBytes (-least-record-bytes).
func writeLeastSetup(fx *load.Fixture, dataDir string, recordBytes int) error {
	setup := baseline.LeastSetup{Balance: money.Units(spawnSignupBonusKP), RecordBytes: recordBytes}
	for _, b := range fx.Bots {
		setup.AddKey(b.Key.Key)
	}
	for _, m := range fx.Markets {
		id, err := uuid.Parse(m)
		if err != nil {
			return fmt.Errorf("least-trade setup: market %q: %w", m, err)
		}
		setup.Markets = append(setup.Markets, id)
	}
	return setup.WriteFile(filepath.Join(dataDir, baseline.LeastSetupFile))
}

func writeJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the JSON report: %w", err)
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("write the JSON report: %w", err)
	}
	return nil
}

// plot writes the charts: latency over time per target, and throughput
// over time of all targets.
func plot(cfg config, skewName string, cmp *load.Comparison) error {
	if err := os.MkdirAll(cfg.plotDir, 0o755); err != nil {
		return fmt.Errorf("create the plot directory: %w", err)
	}
	what := fmt.Sprintf("%s loop, %d conns", mode(cfg), cfg.conns)
	if cfg.rate > 0 {
		what += fmt.Sprintf(", %.0f req/s intended", cfg.rate)
	}
	what += fmt.Sprintf(", %d markets, %s", cfg.markets, skewName)
	for _, t := range cmp.Targets {
		if err := chart.Latency(cfg.plotDir, cfg.plotName+"-latency-"+t.Target, t.Target+" latency: "+what, t.Series); err != nil {
			return err
		}
	}
	return chart.Throughput(cfg.plotDir, cfg.plotName+"-throughput", "throughput: "+what, cmp.Targets)
}
