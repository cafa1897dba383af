package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"marketd/core"
	"marketd/core/eip55"
	"marketd/core/money"
	"marketd/internal/procs"
	"marketd/internal/stall"
	"marketd/snapshot"
	"marketd/transport"
	"marketd/wal"
)

// config is the server's configuration, from flags and MARKETD_<NAME>
// environment variables (a flag on the command line wins).
type config struct {
	addr                 string
	dataDir              string
	adminPassword        string
	fsync                string
	commitInterval       time.Duration
	snapCommitInterval   time.Duration
	defaultTier          string
	signupBonusKP        int64
	anonRatePerMinute    int
	snapshotEvery        time.Duration
	snapshotEveryRecords uint64
	snapshotCPUShare     float64
	snapshotNice         int
	passwordCost         int
	oracleBondKP         int64
	challengeWindow      time.Duration
	voteWindow           time.Duration
	idemRetention        time.Duration
	idemKeys             int
	logFormat            string
	logLevel             string
	backupDir            string
	accessLog            bool
	metricsAddr          string
	drainDelay           time.Duration
	trustedProxies       string
	registrationsPerHour int
	keyChangesPerHour    int
	passwordChecksPerMin int
	maxConnsPerClient    int
	resetAdminPassword   bool
	custody              string
	depositAddress       string
	voteStakeKP          int64
	voteQuorumKP         int64
	minVoters            int
	gcHeadroomMiB        int
	spareProcs           int
	// The stall recorder's flags (stall.go); stallDir empty: off.
	stallDir       string
	stallThreshold time.Duration
	stallWindow    time.Duration
	stallFiles     int
	stallMaxMiB    int
	// servingProcs is the processor count main set for serving, put in
	// force once recovery is done; 0 (run called by a test): leave it.
	servingProcs int
	// holdProcessor is whether servingProcs has a processor beyond the
	// cores for the log's writer (procs.HasSpare), set by main.
	holdProcessor bool
}

// parseConfig reads the flags of args, with defaults taken from the
// environment first.
func parseConfig(args []string, getenv func(string) string) (config, error) {
	var c config
	fs := flag.NewFlagSet("marketd", flag.ContinueOnError)
	fs.StringVar(&c.addr, "addr", ":8080", "address to listen on (host:port; port 0 picks a free one)")
	fs.StringVar(&c.dataDir, "data", "./data", "directory of the write-ahead log and the snapshots")
	fs.StringVar(&c.adminPassword, "admin-password", "", "password of the admin account, created at start if missing (generated and printed once when empty)")
	fs.StringVar(&c.fsync, "fsync", "always", "always: acknowledge a change only once it is on disk; off: UNSAFE, for benchmarks only")
	fs.DurationVar(&c.commitInterval, "commit-interval", DefaultCommitInterval, "after a log commit of 2 to 15 records, the least time from its start to the next commit's, so that one fsync serves more records (0: no wait; at most 10ms)")
	fs.DurationVar(&c.snapCommitInterval, "snapshot-commit-interval", DefaultSnapshotCommitInterval, "-commit-interval while a periodic snapshot is written, when longer (0: -commit-interval throughout; at most 10ms)")
	fs.StringVar(&c.defaultTier, "default-tier", "standard", "rate-limit tier of new API keys: standard, premium or unlimited")
	fs.Int64Var(&c.signupBonusKP, "signup-bonus", 1000, "KP given to every new account, in whole KP")
	fs.IntVar(&c.anonRatePerMinute, "anon-rate", transport.DefaultAnonRatePerMinute, "requests per minute per client IP without credentials (negative: no limit)")
	fs.DurationVar(&c.snapshotEvery, "snapshot-every", snapshot.DefaultEvery, "take a snapshot at least this often when anything changed")
	fs.Uint64Var(&c.snapshotEveryRecords, "snapshot-every-records", snapshot.DefaultEveryRecords, "take a snapshot once the log grew by this many records")
	fs.Float64Var(&c.snapshotCPUShare, "snapshot-cpu-share", snapshot.DefaultCPUShare, "share of one core a periodic snapshot may use while trading goes on (0-1; 1: unpaced)")
	fs.IntVar(&c.snapshotNice, "snapshot-nice", snapshot.DefaultThreadNice, "nice value of the thread that walks and writes a periodic snapshot's accounts, so that trades come first (Linux; 0-19; 0: the process's own)")
	fs.IntVar(&c.passwordCost, "password-cost", transport.DefaultPasswordCost, "bcrypt cost of password hashes (4-31; lower only for tests)")
	fs.Int64Var(&c.oracleBondKP, "oracle-bond", int64(core.DefaultOracleBond/money.Scale), "bond of an oracle proposal and of its challenge, in whole KP")
	fs.DurationVar(&c.challengeWindow, "oracle-challenge-window", core.DefaultChallengeWindow, "how long an oracle proposal may be challenged")
	fs.DurationVar(&c.voteWindow, "oracle-vote-window", core.DefaultVoteWindow, "how long a challenged oracle proposal takes votes")
	fs.DurationVar(&c.idemRetention, "idempotency-retention", core.DefaultIdempotencyRetention, "how long an Idempotency-Key and its stored answer are kept")
	fs.IntVar(&c.idemKeys, "idempotency-keys", core.DefaultIdempotencyKeys, "live Idempotency-Keys an account may hold; a new one past it gets 429")
	fs.StringVar(&c.backupDir, "backup-dir", "./backups", "directory under which POST /api/admin/backup (marketd backup) writes each backup, on this machine")
	fs.StringVar(&c.logFormat, "log-format", "text", "log line format: text (key=value) or json")
	fs.StringVar(&c.logLevel, "log-level", "info", "least severe level logged: debug, info, warn or error")
	fs.BoolVar(&c.accessLog, "access-log", false, "log every answer with a status of 400 or more at info (5xx are logged with their cause either way)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve /metrics and /debug/pprof/ on this address instead (host:port); empty: /metrics on -addr, pprof nowhere")
	fs.Int64Var(&c.voteStakeKP, "oracle-vote-stake", int64(core.DefaultVoteStake/money.Scale), "least stake of an oracle vote, and the stake of a vote that names none, in whole KP")
	fs.Int64Var(&c.voteQuorumKP, "oracle-vote-quorum", int64(core.DefaultVoteQuorum/money.Scale), "stake an oracle vote needs in all to decide, in whole KP; less escalates to the admin")
	fs.IntVar(&c.minVoters, "oracle-min-voters", core.DefaultMinVoters, "voters an oracle vote needs to decide; fewer escalates to the admin")
	fs.StringVar(&c.custody, "custody", "manual", "manual: an admin confirms each USDC deposit and marks each withdrawal sent or failed; record: UNSAFE, credits every deposit and sends every withdrawal at once, for tests and demos only")
	fs.StringVar(&c.depositAddress, "deposit-address", "", "the custody's address to which users send USDC, shown by GET /api/token/balance (0x and 40 hexadecimal digits; empty: none shown)")
	fs.DurationVar(&c.drainDelay, "drain-delay", 0, "on SIGTERM, answer /readyz 503 and keep serving this long before closing the listener")
	fs.StringVar(&c.trustedProxies, "trusted-proxies", "", "comma-separated CIDRs of proxies whose X-Forwarded-For names the client (empty: the peer is the client)")
	fs.IntVar(&c.registrationsPerHour, "registrations-per-client", transport.DefaultRegistrationsPerHour, "accounts one client address (IPv6: /64) may register an hour (negative: no limit)")
	fs.IntVar(&c.keyChangesPerHour, "key-changes-per-account", transport.DefaultKeyChangesPerHour, "API key creations and rotations one account may make an hour (negative: no limit)")
	fs.IntVar(&c.passwordChecksPerMin, "password-checks-per-client", transport.DefaultPasswordChecksPerMinute, "password checks (login, register, password change) one client address may start a minute (negative: no limit)")
	fs.IntVar(&c.maxConnsPerClient, "max-conns-per-client", transport.DefaultMaxConnsPerClient, "open connections one client address (IPv6: /64) may hold (negative: no limit)")
	fs.IntVar(&c.gcHeadroomMiB, "gc-headroom-mib", DefaultGCHeadroomMiB, "MiB the heap may grow past what the last garbage collection left live before the next one, at least (the collector's GOGC target applies above it; 0: GOGC alone)")
	fs.IntVar(&c.spareProcs, "spare-procs", procs.DefaultSpare, "processors the Go runtime runs goroutines on beyond one per CPU, so that one held by the log's fsync leaves every core in use (0: one per CPU; the GOMAXPROCS environment variable, when set, wins)")
	fs.StringVar(&c.stallDir, "stall-dir", "", "keep the last -stall-window of execution trace in memory and write it to this directory when a request or a log commit takes longer than -stall-threshold (docs/OPERATIONS.md, \"Stall traces\"; empty: off)")
	fs.DurationVar(&c.stallThreshold, "stall-threshold", stall.DefaultThreshold, "with -stall-dir: the duration of a request or a log commit past which a trace is written")
	fs.DurationVar(&c.stallWindow, "stall-window", stall.DefaultWindow, "with -stall-dir: the trace kept, and the least time between two traces written")
	fs.IntVar(&c.stallFiles, "stall-files", stall.DefaultFiles, "with -stall-dir: traces kept in it; writing one more removes the oldest")
	fs.IntVar(&c.stallMaxMiB, "stall-max-mib", stall.DefaultMaxFileBytes>>20, "with -stall-dir: MiB one trace may take; a larger one is not kept (the recorder holds about half of it in memory)")
	fs.BoolVar(&c.resetAdminPassword, "reset-admin-password", false, "set the existing admin account's password to -admin-password and end its sessions (without it, -admin-password only creates the account)")
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		name := "MARKETD_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" && envErr == nil {
			if err := f.Value.Set(v); err != nil {
				envErr = fmt.Errorf("%s: %w", name, err)
			}
		}
	})
	if envErr != nil {
		return c, envErr
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	return c, c.validate()
}

func (c *config) validate() error {
	switch {
	case c.fsync != "always" && c.fsync != "off":
		return fmt.Errorf("-fsync: %q is neither always nor off", c.fsync)
	case c.commitInterval < 0 || c.commitInterval > wal.MaxCommitInterval:
		return fmt.Errorf("-commit-interval: %v is out of range 0-%v", c.commitInterval, wal.MaxCommitInterval)
	case c.snapCommitInterval < 0 || c.snapCommitInterval > wal.MaxCommitInterval:
		return fmt.Errorf("-snapshot-commit-interval: %v is out of range 0-%v", c.snapCommitInterval, wal.MaxCommitInterval)
	case c.signupBonusKP < 0 || c.signupBonusKP > 1_000_000_000:
		return fmt.Errorf("-signup-bonus: %d is out of range 0-1e9", c.signupBonusKP)
	case c.snapshotEvery <= 0:
		return fmt.Errorf("-snapshot-every: must be positive")
	case c.snapshotEveryRecords == 0:
		return fmt.Errorf("-snapshot-every-records: must be positive")
	case !(c.snapshotCPUShare > 0 && c.snapshotCPUShare <= 1):
		return fmt.Errorf("-snapshot-cpu-share: %v is not in (0, 1]", c.snapshotCPUShare)
	case c.snapshotNice < 0 || c.snapshotNice > snapshot.MaxThreadNice:
		return fmt.Errorf("-snapshot-nice: %d is out of range 0-%d", c.snapshotNice, snapshot.MaxThreadNice)
	case c.passwordCost < 4 || c.passwordCost > 31:
		return fmt.Errorf("-password-cost: %d is out of range 4-31", c.passwordCost)
	case c.oracleBondKP <= 0 || c.oracleBondKP > 1_000_000_000:
		return fmt.Errorf("-oracle-bond: %d is out of range 1-1e9", c.oracleBondKP)
	case c.challengeWindow <= 0:
		return fmt.Errorf("-oracle-challenge-window: must be positive")
	case c.voteWindow <= 0:
		return fmt.Errorf("-oracle-vote-window: must be positive")
	case c.idemRetention <= 0:
		return fmt.Errorf("-idempotency-retention: must be positive")
	case c.idemKeys <= 0 || c.idemKeys > 1_000_000:
		return fmt.Errorf("-idempotency-keys: %d is out of range 1-1000000", c.idemKeys)
	case c.logFormat != "text" && c.logFormat != "json":
		return fmt.Errorf("-log-format: %q is neither text nor json", c.logFormat)
	case c.drainDelay < 0 || c.drainDelay > maxDrainDelay:
		return fmt.Errorf("-drain-delay: %v is out of range 0-%v", c.drainDelay, maxDrainDelay)
	case c.voteStakeKP <= 0 || c.voteStakeKP > 1_000_000_000:
		return fmt.Errorf("-oracle-vote-stake: %d is out of range 1-1e9", c.voteStakeKP)
	case c.voteQuorumKP <= 0 || c.voteQuorumKP > 1_000_000_000_000:
		return fmt.Errorf("-oracle-vote-quorum: %d is out of range 1-1e12", c.voteQuorumKP)
	case c.minVoters < 1 || c.minVoters > core.MaxVotesPerProposal:
		return fmt.Errorf("-oracle-min-voters: %d is out of range 1-%d", c.minVoters, core.MaxVotesPerProposal)
	case c.custody != "manual" && c.custody != "record":
		return fmt.Errorf("-custody: %q is neither manual nor record", c.custody)
	case c.anonRatePerMinute == 0:
		return fmt.Errorf("-anon-rate: 0 would refuse every anonymous request; use a negative value for no limit")
	case c.registrationsPerHour == 0:
		return fmt.Errorf("-registrations-per-client: 0 would refuse every registration; use a negative value for no limit")
	case c.keyChangesPerHour == 0:
		return fmt.Errorf("-key-changes-per-account: 0 would refuse every key creation; use a negative value for no limit")
	case c.passwordChecksPerMin == 0:
		return fmt.Errorf("-password-checks-per-client: 0 would refuse every login; use a negative value for no limit")
	case c.resetAdminPassword && c.adminPassword == "":
		return fmt.Errorf("-reset-admin-password: needs -admin-password, the password to set")
	case c.gcHeadroomMiB < 0 || c.gcHeadroomMiB > maxGCHeadroomMiB:
		return fmt.Errorf("-gc-headroom-mib: %d is out of range 0-%d", c.gcHeadroomMiB, maxGCHeadroomMiB)
	case c.spareProcs < 0 || c.spareProcs > procs.MaxSpare:
		return fmt.Errorf("-spare-procs: %d is out of range 0-%d", c.spareProcs, procs.MaxSpare)
	case c.maxConnsPerClient == 0:
		return fmt.Errorf("-max-conns-per-client: 0 would refuse every connection; use a negative value for no limit")
	}
	if err := c.validateStall(); err != nil {
		return err
	}
	if _, err := transport.ParseTrustedProxies(c.trustedProxies); err != nil {
		return fmt.Errorf("-trusted-proxies: %w", err)
	}
	if c.depositAddress != "" {
		addr, err := eip55.Parse(c.depositAddress)
		if err != nil {
			return fmt.Errorf("-deposit-address: %w", err)
		}
		c.depositAddress = addr
	}
	if _, err := c.level(); err != nil {
		return err
	}
	if _, ok := core.ParseTier(c.defaultTier); !ok {
		return fmt.Errorf("-default-tier: %q is not standard, premium or unlimited", c.defaultTier)
	}
	return nil
}

// engineConfig is the part of c the engine takes.
func (c *config) engineConfig() core.Config {
	return core.Config{
		OracleBond:      money.Units(c.oracleBondKP),
		ChallengeWindow: c.challengeWindow,
		VoteWindow:      c.voteWindow,
		Idempotency:     core.IdempotencyLimits{Retention: c.idemRetention, Keys: c.idemKeys},
		CustodyMode:     c.custodyMode(),
		VoteStake:       money.Units(c.voteStakeKP),
		VoteQuorum:      money.Units(c.voteQuorumKP),
		MinVoters:       c.minVoters,
	}
}

// custodyMode is the engine's custody mode of -custody.
func (c *config) custodyMode() core.CustodyMode {
	if c.custody == "record" {
		return core.CustodyModeRecord
	}
	return core.CustodyModeManual
}

// transportConfig is the part of c the HTTP server takes.
func (c *config) transportConfig() transport.Config {
	tier, _ := core.ParseTier(c.defaultTier)
	return transport.Config{
		DefaultTier:       tier,
		SignupBonus:       money.Units(c.signupBonusKP),
		AnonRatePerMinute: c.anonRatePerMinute,
		PasswordCost:      c.passwordCost,
		AccessLog:         c.accessLog,
		// validate parsed it already.
		TrustedProxies:          must(transport.ParseTrustedProxies(c.trustedProxies)),
		RegistrationsPerHour:    c.registrationsPerHour,
		KeyChangesPerHour:       c.keyChangesPerHour,
		PasswordChecksPerMinute: c.passwordChecksPerMin,
		MaxConnsPerClient:       c.maxConnsPerClient,
		DepositAddress:          c.depositAddress,
	}
}

// must returns v of a call whose error validate has ruled out.
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("BUG: validated configuration failed: %v", err))
	}
	return v
}

// DefaultCommitInterval is -commit-interval's default. Each fsync costs
// about 0.14 ms of CPU; at half the machine's durable rate the log
// committed about 1,200 times a second, 8 records each, and the fsyncs
// took a quarter of the server's CPU on two cores it shares with its
// clients. Waiting out 1 ms from a commit's start took the server's CPU
// per trade down by 10-25% and the p99 of the 8-market and hot rows down
// by 29-44% (medians), the p50 within 0.1 ms; 2 ms added 1 ms to the p50
// and gained no more (docs/PERFORMANCE.md, "The commit interval by
// default").
const DefaultCommitInterval = time.Millisecond

// DefaultSnapshotCommitInterval is -snapshot-commit-interval's default.
// A periodic snapshot of 1,000,000 accounts takes about a core for about
// a second; at half the machine's durable rate the log's fsyncs, about
// 3,000 a second of 5-6 records each, take 0.3-0.4 of a core
// more. Gathering for 0.5 ms while the snapshot runs leaves the trades
// the CPU those fsyncs took, for at most half a millisecond more per
// trade, and nothing outside snapshots (docs/PERFORMANCE.md, "The commit
// interval"). That was measured with -commit-interval 0; below the default
// -commit-interval it changes nothing, and counts when -commit-interval is
// set shorter.
const DefaultSnapshotCommitInterval = 500 * time.Microsecond

// maxDrainDelay bounds -drain-delay: a supervisor waits about this long
// (Kubernetes' default grace period is 30 s) before it kills the process.
const maxDrainDelay = 5 * time.Minute

// level returns the -log-level as a slog.Level.
func (c *config) level() (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.logLevel)); err != nil {
		return 0, fmt.Errorf("-log-level: %q is not debug, info, warn or error", c.logLevel)
	}
	return l, nil
}

// newLogger returns the process' logger: -log-format lines at -log-level
// and above, written to w.
func (c *config) newLogger(w io.Writer) *slog.Logger {
	l, _ := c.level() // validate checked it
	opts := &slog.HandlerOptions{Level: l}
	if c.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
