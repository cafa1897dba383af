package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"marketd/bench/baseline"
	"marketd/bench/load"
	"marketd/bench/populate"
	"marketd/internal/procs"
)

// config is marketd-load's configuration, from its flags.
type config struct {
	addr          string
	spawn         string
	serverArgs    []string
	serverLog     string
	dataDir       string
	adminPassword string
	bots, markets int
	conns         int
	duration      time.Duration
	warmup        time.Duration
	rate          float64
	mix           load.Mix
	skew          string
	hotShare      float64
	zipfS         float64
	seed          uint64
	timeout       time.Duration
	compare       bool
	// leastRecordBytes pads the least-trade handler's records (-compare).
	leastRecordBytes int
	// floors is how the handlers marketd is compared with run.
	floors        floorOptions
	rounds        int
	jsonPath      string
	plotDir       string
	plotName      string
	progress      string
	sync          bool // sync(2) before each warm-up
	accounts      int
	snapshotEvery time.Duration
	// floorSnapshotBytes is the size of the files written beside the
	// floors (floorSnapshots); 0: none.
	floorSnapshotBytes int64
	// floorSnapshotSpread is how long each of those files' writes is
	// spread over; 0: as fast as they are written.
	floorSnapshotSpread time.Duration
	tracePrefix         string
	baselines           string
	profilePrefix       string
	// serveBaselines, when set, makes this process the baselines' child
	// of another marketd-load (-serve-baselines DIR) and nothing else.
	serveBaselines string
	spareProcs     int
	// pauses stops the spawned marketd and the baselines' child on a
	// schedule during measured runs (load.Pauses).
	pauses load.Pauses
}

// maxTracedRun bounds -duration with -trace: the server's trace comes from
// its side listener, whose answers are cut at its write timeout of 2
// minutes (cmd/marketd, sideWriteTimeout).
const maxTracedRun = 100 * time.Second

// maxFloorSnapshotBytes bounds -floor-snapshot-bytes: 16 GiB, past any
// snapshot of populate.MaxAccounts accounts with their histories.
const maxFloorSnapshotBytes = 16 << 30

func parseConfig(args []string) (config, error) {
	var c config
	var mix, serverArgs string
	fs := flag.NewFlagSet("marketd-load", flag.ContinueOnError)
	fs.StringVar(&c.addr, "addr", "", "a running marketd: host:port or http://host:port (or give -spawn)")
	fs.StringVar(&c.spawn, "spawn", "", "path of a marketd binary to start on a loopback port and a temporary data directory")
	fs.StringVar(&serverArgs, "server-args", "", "more flags for the spawned marketd, space-separated")
	fs.StringVar(&c.serverLog, "server-log", "", "file the spawned marketd's output is appended to (default: in its data directory)")
	fs.StringVar(&c.dataDir, "data", "", "with -spawn: its data directory (default: a new temporary one, removed after); with -addr and -compare: the directory of the fsync-only and least-trade handlers' files, on the server's disk")
	fs.StringVar(&c.adminPassword, "admin-password", "", "the admin's password (default: $MARKETD_ADMIN_PASSWORD; with -spawn, a generated one: give one to spawn marketd again on a -data directory it made, whose admin has the password of its first start)")
	fs.IntVar(&c.bots, "bots", 0, "simulated bots (default: -conns); at least -conns")
	fs.IntVar(&c.markets, "markets", 8, "markets the admin creates")
	fs.IntVar(&c.conns, "conns", 64, "connections, each with a worker")
	fs.DurationVar(&c.duration, "duration", 20*time.Second, "length of each measured run")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured run before each measured one")
	fs.Float64Var(&c.rate, "rate", 0, "open loop: requests per second, all connections together (0: closed loop)")
	fs.StringVar(&mix, "mix", load.DefaultMix, "weights of the requests: buy, sell, split, merge, active, me, points, portfolio")
	fs.StringVar(&c.skew, "skew", "uniform", "how requests spread over the markets: uniform, hot or zipf")
	fs.Float64Var(&c.hotShare, "hot-share", 0.9, "with -skew hot: the share of market 0")
	fs.Float64Var(&c.zipfS, "zipf-s", 1.1, "with -skew zipf: the exponent")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of the requests' PCG (default: random, printed)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "a request unanswered after this counts as failed")
	fs.BoolVar(&c.compare, "compare", false, "alternate the load between marketd, a no-op handler, an fsync-only handler and, when -mix is only buy and sell, a least-trade handler (docs/PERFORMANCE.md), and print the ratios")
	fs.IntVar(&c.leastRecordBytes, "least-record-bytes", 0, "with -compare: pad each record of the least-trade handler to this many bytes (0: its own 100; 300: as many as the fsync-only handler writes)")
	fs.DurationVar(&c.floors.commitInterval, floorCommitIntervalFlag, 0, "with -compare: the fsync-only and least-trade handlers wait between commits as marketd's log does with this -commit-interval (docs/PERFORMANCE.md, \"Floors that wait as marketd does\"); give marketd's (1ms by default) to compare like with like; 0: they never wait")
	fs.BoolVar(&c.floors.holdProcessor, floorHoldProcessorFlag, false, "with -compare: the fsync-only and least-trade handlers keep their processor through the fsync and the commit interval's wait, as marketd's log does with a spare processor (docs/PERFORMANCE.md, \"The writer's fsync on its own processor\"); give it to compare like with like")
	fs.Int64Var(&c.floors.ballastBytes, floorBallastBytesFlag, 0, "with -compare: the handlers' process holds this many bytes of memory it wrote once and never touches again, as marketd holds accounts a load does not trade on (docs/PERFORMANCE.md, \"The 1,000,000-account row's every second\"); give marketd's resident size less a small server's; 0: none")
	fs.IntVar(&c.rounds, "rounds", 3, "with -compare: rounds of the targets")
	fs.StringVar(&c.jsonPath, "json", "", "write the report as JSON to this file")
	fs.StringVar(&c.plotDir, "plot", "", "write PNG and SVG charts of latency and throughput over time to this directory")
	fs.StringVar(&c.plotName, "plot-name", "load", "prefix of the charts' file names")
	fs.StringVar(&c.progress, "progress", "auto", "live progress line: auto (only on a terminal), on or off")
	fs.BoolVar(&c.sync, "sync", true, "before each warm-up (each run, without one), write the machine's dirty pages to disk (sync(2)), so that what was written before the run (a build, the last run's files) is not written back by the kernel during it (docs/PERFORMANCE.md, \"Writeback that is not the server's\")")
	fs.IntVar(&c.accounts, "accounts", 0, "with -spawn: fill its data directory (new or empty) with this many accounts and a snapshot of them before starting it, offline through core, the log and the snapshot code")
	fs.DurationVar(&c.snapshotEvery, "snapshot-every", 0, "with -spawn: the server takes a snapshot this often (its -snapshot-every); with either, the seconds during which a snapshot was taken are marked (from the server's /metrics, scraped every 250 ms)")
	fs.Int64Var(&c.floorSnapshotBytes, "floor-snapshot-bytes", 0, "with -compare and -snapshot-every: during each measured run of a handler marketd is compared with, write a file of this many bytes every -snapshot-every, the way marketd writes a periodic snapshot, beside -data (docs/PERFORMANCE.md, \"A floor for the 1,000,000-account row\"); give the size of marketd's snapshots (its marketd_snapshot_size_bytes); 0: none")
	fs.DurationVar(&c.floorSnapshotSpread, "floor-snapshot-spread", 0, "with -floor-snapshot-bytes: spread the writes of each file evenly over this long, as marketd's take about that long (its marketd_snapshot_duration_seconds); 0: as fast as they are written")
	fs.StringVar(&c.tracePrefix, "trace", "", "with -spawn: write execution traces of marketd's first measured run, the server's to PREFIX-server.trace (the server listens for -metrics-addr on a loopback port) and marketd-load's own to PREFIX-client.trace; with -compare, marketd-load's during the fsync-only handler's first measured run to PREFIX-fsync-only.trace (the handler in it with -baselines in-process)")
	fs.StringVar(&c.baselines, "baselines", baselinesProcess, "with -compare: where the no-op and fsync-only handlers run: process (a child process of their own, as marketd runs in its own) or in-process (in marketd-load itself)")
	fs.StringVar(&c.profilePrefix, "cpuprofile", "", "write a CPU profile of marketd-load itself during each target's first measured run to PREFIX-TARGET.prof")
	fs.StringVar(&c.serveBaselines, "serve-baselines", "", "internal: serve the baseline handlers (the fsync-only file in this directory) for a parent marketd-load, naming their addresses on stdout, until stdin ends")
	fs.IntVar(&c.spareProcs, "spare-procs", procs.DefaultSpare, "processors beyond one per CPU for marketd-load itself (its load and its no-op and fsync-only handlers) and, by GOMAXPROCS, for the spawned marketd, so that marketd and the handlers it is compared with run on the same count (marketd's -spare-procs; the GOMAXPROCS environment variable, when set, wins for both)")
	fs.DurationVar(&c.pauses.Every, "pause-every", 0, "with -spawn: during each measured run, stop the server's process (SIGSTOP) this often, from the run's start, for -pause-for, then resume it: the same stall for marketd and each handler it is compared with (docs/PERFORMANCE.md, \"The drain after a stall\"); 0: never")
	fs.DurationVar(&c.pauses.For, "pause-for", 0, "with -pause-every: how long each pause lasts")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if c.serveBaselines != "" {
		return c, checkServeBaselines(fs, c)
	}
	if c.bots == 0 {
		c.bots = c.conns
	}
	if c.seed == 0 {
		c.seed = rand.Uint64()
	}
	c.serverArgs = strings.Fields(serverArgs)
	if strings.Contains(c.addr, "://") {
		u, err := url.Parse(c.addr)
		if err != nil || u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return c, fmt.Errorf("-addr: %q is not host:port or http://host:port", c.addr)
		}
		c.addr = u.Host
	}
	var err error
	if c.mix, err = load.ParseMix(mix); err != nil {
		return c, err
	}
	if err := c.validate(); err != nil {
		return c, err
	}
	return c, c.validatePauses()
}

// validatePauses checks -pause-every and -pause-for: a schedule whose
// pauses end before the next, of processes of their own.
func (c *config) validatePauses() error {
	if err := c.pauses.Validate(); err != nil {
		return fmt.Errorf("-pause-every, -pause-for: %w", err)
	}
	switch {
	case !c.pauses.On():
		return nil
	case c.spawn == "":
		return fmt.Errorf("-pause-every needs -spawn: the server paused is the process it starts")
	case c.pauses.For >= c.timeout:
		return fmt.Errorf("-pause-for: %v is not under -timeout (%v): every request held by a pause would fail", c.pauses.For, c.timeout)
	case c.compare && c.baselines == baselinesInProcess:
		return fmt.Errorf("-pause-every needs -baselines %s: handlers in this process cannot be paused without the load", baselinesProcess)
	}
	return nil
}

func (c *config) validate() error {
	floorsErr := c.floors.check()
	switch {
	case c.spareProcs < 0 || c.spareProcs > procs.MaxSpare:
		return fmt.Errorf("-spare-procs: %d is out of range 0-%d", c.spareProcs, procs.MaxSpare)
	case (c.addr == "") == (c.spawn == ""):
		return fmt.Errorf("give one of -addr and -spawn")
	case c.conns < 1 || c.conns > 10_000:
		return fmt.Errorf("-conns: %d is out of range 1-10000", c.conns)
	case c.bots < c.conns || c.bots > 100_000:
		return fmt.Errorf("-bots: %d is out of range -conns (%d) to 100000", c.bots, c.conns)
	case c.markets < 1 || c.markets > 10_000:
		return fmt.Errorf("-markets: %d is out of range 1-10000", c.markets)
	case c.duration <= 0 || c.warmup < 0:
		return fmt.Errorf("-duration must be positive and -warmup not negative")
	case c.rate < 0:
		return fmt.Errorf("-rate: %v is negative", c.rate)
	case c.leastRecordBytes < 0 || c.leastRecordBytes > baseline.MaxRecordBytes:
		return fmt.Errorf("-least-record-bytes: %d is out of range 0-%d", c.leastRecordBytes, baseline.MaxRecordBytes)
	case floorsErr != nil:
		return floorsErr
	case c.floors.ballastBytes > 0 && c.baselines == baselinesInProcess:
		return fmt.Errorf("-floor-ballast-bytes needs -baselines %s: in this process the load generator would hold it too", baselinesProcess)
	case c.rounds < 1 || c.rounds > 100:
		return fmt.Errorf("-rounds: %d is out of range 1-100", c.rounds)
	case c.compare && c.spawn == "" && c.dataDir == "":
		return fmt.Errorf("-compare against -addr needs -data: a directory on the server's disk for the fsync-only handler's file")
	case c.baselines != baselinesProcess && c.baselines != baselinesInProcess:
		return fmt.Errorf("-baselines: %q is not %s or %s", c.baselines, baselinesProcess, baselinesInProcess)
	case c.progress != "auto" && c.progress != "on" && c.progress != "off":
		return fmt.Errorf("-progress: %q is not auto, on or off", c.progress)
	case c.timeout <= 0:
		return fmt.Errorf("-timeout must be positive")
	case c.accounts < 0 || c.accounts > populate.MaxAccounts:
		return fmt.Errorf("-accounts: %d is out of range 0-%d", c.accounts, populate.MaxAccounts)
	case c.accounts > 0 && c.spawn == "":
		return fmt.Errorf("-accounts needs -spawn: the data directory is filled before the server starts")
	case c.snapshotEvery < 0:
		return fmt.Errorf("-snapshot-every: %v is negative", c.snapshotEvery)
	case c.floorSnapshotBytes < 0 || c.floorSnapshotBytes > maxFloorSnapshotBytes:
		return fmt.Errorf("-floor-snapshot-bytes: %d is out of range 0-%d", c.floorSnapshotBytes, int64(maxFloorSnapshotBytes))
	case c.floorSnapshotSpread < 0 || (c.floorSnapshotSpread > 0 && c.floorSnapshotSpread >= c.snapshotEvery):
		return fmt.Errorf("-floor-snapshot-spread: %v is not in 0 to -snapshot-every (%v)", c.floorSnapshotSpread, c.snapshotEvery)
	case c.floorSnapshotBytes > 0 && (!c.compare || c.snapshotEvery == 0):
		return fmt.Errorf("-floor-snapshot-bytes needs -compare and -snapshot-every: the files are written beside the floors, as often as marketd snapshots")
	case c.tracePrefix != "" && c.spawn == "":
		return fmt.Errorf("-trace needs -spawn: the server's trace comes from a listener it is started with")
	case c.tracePrefix != "" && c.duration > maxTracedRun:
		return fmt.Errorf("-trace: -duration %v is over %v, the longest trace the server's side listener answers", c.duration, maxTracedRun)
	}
	_, err := load.NewSkew(c.skew, c.markets, c.hotShare, c.zipfS)
	return err
}

// checkServeBaselines checks the flags of a baselines' child
// (-serve-baselines): the floors' three, which its parent passes on, and
// no other.
func checkServeBaselines(fs *flag.FlagSet, c config) error {
	others := 0
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "serve-baselines" && f.Name != floorCommitIntervalFlag && f.Name != floorHoldProcessorFlag && f.Name != floorBallastBytesFlag {
			others++
		}
	})
	if others > 0 {
		return fmt.Errorf("-serve-baselines takes no other flag but -floor-commit-interval, -floor-fsync-holds-processor and -floor-ballast-bytes")
	}
	return c.floors.check()
}
