package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"marketd/core"
	"marketd/internal/dirlock"
	"marketd/internal/metrics"
	"marketd/internal/stall"
	"marketd/snapshot"
	"marketd/transport"
	"marketd/wal"
)

// errLogFailed reports a write-ahead log that failed (a write or an fsync
// error): nothing more can be acknowledged, and only a restart, with repair
// and replay, knows what is on disk.
var errLogFailed = errors.New("write-ahead log failed")

// shutdownTimeout bounds how long the requests in flight may take to be
// answered once a stop is asked for.
const shutdownTimeout = 30 * time.Second

// node is one running service: the log, the engine over the recovered
// state, the snapshot manager and the HTTP server.
type node struct {
	lock  *dirlock.Lock
	log   *wal.Log
	eng   *core.Engine
	snaps *snapshot.Manager
	srv   *transport.Server

	backupMu sync.Mutex // held by backup, one at a time
}

// run serves until ctx is done, then stops cleanly. out receives the
// generated admin password, once.
//
// The listener opens before recovery, so that /healthz, /readyz and
// /metrics answer while a large log is replayed; every other route answers
// 503 Recovering until the engine is built and the admin account exists
// (docs/API.md, "Health").
func run(ctx context.Context, cfg config, logger *slog.Logger, out io.Writer) error {
	started := time.Now()
	rec, err := cfg.newStallRecorder(logger)
	if err != nil {
		return err
	}
	reg := newRegistry()
	pos, late := &positions{}, &lateNode{}
	sv, err := startServers(cfg, newAPIServer(cfg, logger, reg, pos, late, rec), reg, logger)
	if err != nil {
		return err
	}
	n, err := start(cfg, logger, reg, sv.api, started, rec)
	if err != nil {
		return errors.Join(err, sv.stopAPI(), sv.stopSide())
	}
	pos.log, pos.snaps = n.log, n.snaps
	gcTarget := serveRuntime(cfg)
	defer gcTarget.Stop()
	late.n = n
	if err := n.open(ctx, cfg, logger, out, rec, started); err != nil {
		return errors.Join(err, n.shutdown(logger, 0), sv.stopSide())
	}
	if rec != nil {
		defer rec.Close()
	}
	return n.serveUntilStop(ctx, cfg, logger, sv)
}

// lateNode hands the node to the callbacks the transport is given before
// recovery builds it (Config.LogErr, Config.Backup). n is set once
// recovery is done, before the server opens its routes, and only those
// routes call the callbacks (transport.Server.Open).
type lateNode struct {
	n *node
}

// newAPIServer makes the API server, without an engine: it answers
// /healthz, /readyz and /metrics, and 503 Recovering on every other route,
// until start attaches the engine and open opens its routes.
func newAPIServer(cfg config, logger *slog.Logger, reg *prometheus.Registry, pos *positions, late *lateNode, rec *stall.Recorder) *transport.Server {
	tc := cfg.transportConfig()
	tc.Logger = logger
	tc.Status = pos
	tc.Metrics = reg
	if cfg.metricsAddr == "" {
		tc.ServeMetrics = reg
	}
	if rec != nil {
		tc.SlowRequest, tc.SlowRequestAfter = rec.ObserveRequest, rec.Threshold()
	}
	tc.LogErr = func() error { return late.n.log.Err() }
	tc.Backup = func(ctx context.Context, name string) (transport.BackupResult, error) {
		return late.n.backup(ctx, cfg, name)
	}
	return transport.New(nil, tc)
}

// servers are the HTTP servers that answer from before recovery: the API
// server on its listener, and the side server of /metrics when it has an
// address of its own (-metrics-addr).
type servers struct {
	api      *transport.Server
	serveErr chan error  // what api's Serve returned, once
	side     *sideServer // nil without -metrics-addr
}

// startServers listens on cfg.addr and serves api there, then starts the
// side server. When the side server cannot start, the API server is
// stopped before the error is returned.
func startServers(cfg config, api *transport.Server, reg *prometheus.Registry, logger *slog.Logger) (*servers, error) {
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	logger.Info("listening", "addr", ln.Addr().String(), "phase", api.Phase().String())
	sv := &servers{api: api, serveErr: make(chan error, 1)}
	go func() { sv.serveErr <- api.Serve(ln) }()
	if cfg.metricsAddr != "" {
		sv.side, err = startSideServer(cfg.metricsAddr, reg, logger)
		if err != nil {
			return nil, errors.Join(err, sv.stopAPI())
		}
	}
	return sv, nil
}

// stopAPI stops the API server, answering the requests in flight within
// shutdownTimeout; for a start-up that fails before the node exists (once
// it does, node.shutdown stops the server).
func (sv *servers) stopAPI() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return sv.api.Shutdown(ctx)
}

// stopSide stops the side server, if there is one.
func (sv *servers) stopSide() error {
	if sv.side == nil {
		return nil
	}
	return sv.side.shutdown()
}

// open makes the recovered node serve: it makes sure of the admin account,
// starts the stall recorder (when there is one), then opens the server's
// routes. rec, when not nil, must be closed by the caller once open
// returns nil.
func (n *node) open(ctx context.Context, cfg config, logger *slog.Logger, out io.Writer, rec *stall.Recorder, started time.Time) error {
	if err := ensureAdmin(ctx, n.eng, cfg.adminPassword, cfg.resetAdminPassword, out, n.srv, logger); err != nil {
		return err
	}
	if rec != nil {
		// Started once recovery is done: its commits and requests are the
		// ones a stall of serving would hold.
		if err := rec.Start(); err != nil {
			return err
		}
		logger.Info("stall recorder on", "dir", cfg.stallDir, "threshold", cfg.stallThreshold,
			"window", cfg.stallWindow, "files", cfg.stallFiles, "max_mib", cfg.stallMaxMiB)
	}
	n.srv.Open()
	logger.Info("ready", "took", time.Since(started), "gomaxprocs", runtime.GOMAXPROCS(0))
	return nil
}

// serveUntilStop runs the snapshot manager while the node serves, until
// ctx is done, the API server stops on its own, or the log fails; then it
// stops the snapshot manager and the node (failStop after a failed log,
// shutdown otherwise) and the side server.
func (n *node) serveUntilStop(ctx context.Context, cfg config, logger *slog.Logger, sv *servers) error {
	snapCtx, cancelSnaps := context.WithCancel(context.Background())
	snapsDone := make(chan struct{})
	go func() {
		defer close(snapsDone)
		n.snaps.Run(snapCtx)
	}()
	var cause error
	select {
	case <-ctx.Done():
		logger.Info("stopping", "reason", context.Cause(ctx), "drain_delay", cfg.drainDelay)
	case err := <-sv.serveErr:
		cause = err
	case <-n.log.Failed():
		cancelSnaps()
		<-snapsDone
		return errors.Join(n.failStop(logger), sv.stopSide())
	}
	cancelSnaps()
	<-snapsDone
	return errors.Join(cause, n.shutdown(logger, cfg.drainDelay), sv.stopSide())
}

// serveRuntime puts the runtime's settings for serving in force once
// recovery is done: the processor count main chose (recovery ran without
// the spare ones) and the collector's headroom (recovery sets a target of
// its own while it runs).
func serveRuntime(cfg config) *gcHeadroom {
	if cfg.servingProcs > 0 {
		runtime.GOMAXPROCS(cfg.servingProcs)
	}
	return startGCHeadroom(uint64(cfg.gcHeadroomMiB) << 20)
}

// failStopGrace is how long a server whose log failed keeps answering
// every API request and /readyz 503 log_failed before it exits: long
// enough that a client or a probe gets that answer rather than a refused
// connection, short enough that a supervisor restarts it at once.
const failStopGrace = time.Second

// failStop stops the server after its log failed: a write or an fsync
// returned an error, so nothing more can be acknowledged and memory may
// hold changes that are not on disk (transport answers 503 log_failed from
// the moment of the failure, through Config.LogErr, and Fail makes it
// final). There is no retry of the fsync and no final snapshot: only a
// restart, which repairs and replays the log, knows what is durable. It
// returns an error wrapping errLogFailed, which main turns into exit
// status 3.
func (n *node) failStop(logger *slog.Logger) error {
	n.srv.Fail()
	logErr := n.log.Err()
	logger.Error("write-ahead log failed: answering 503 and stopping; restart to recover", "err", logErr, "grace", failStopGrace)
	time.Sleep(failStopGrace)
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := n.srv.Shutdown(ctx) // answers the requests in flight: 503 too
	n.eng.Close()
	return errors.Join(fmt.Errorf("%w: %w", errLogFailed, logErr), err)
}

// newRegistry returns the registry of every metric of the process, with
// the Go runtime's and the process' collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// start opens the log, recovers the state and builds the engine and the
// snapshot manager, and attaches the engine to srv.
//
// stalls, when not nil, is told of every commit of the log.
func start(cfg config, logger *slog.Logger, reg prometheus.Registerer, srv *transport.Server, started time.Time, stalls *stall.Recorder) (n *node, err error) {
	// The lock comes first: nothing in the directory may be touched (a torn
	// tail cut, a snapshot set aside) while another process owns it.
	lock, err := dirlock.Exclusive(cfg.dataDir)
	if err != nil {
		return nil, fmt.Errorf("lock the data directory (is another marketd running on %s?): %w", cfg.dataDir, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, lock.Release())
		}
	}()
	logMetrics := metrics.NewLog(reg)
	opts := wal.Options{NoFsync: cfg.fsync == "off", CommitInterval: cfg.commitInterval, FsyncHoldsProcessor: cfg.holdProcessor,
		Logger: logger, Observer: logMetrics}
	if stalls != nil {
		opts.Observer = commitObservers{logMetrics, stalls}
		metrics.RegisterStall(reg, stalls)
	}
	// wal.Open and snapshot.Recover create their directories.
	log, err := wal.Open(filepath.Join(cfg.dataDir, "wal"), opts)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	snapDir := filepath.Join(cfg.dataDir, "snapshots")
	st, rec, took, err := recoverState(snapDir, log, logger)
	if err != nil {
		return nil, errors.Join(err, log.Close())
	}
	var snapFrom uint64
	if rec.Snapshot != nil {
		snapFrom = rec.Snapshot.From
	}
	ls := log.Stats()
	logger.Info("recovered", "snapshot", rec.Snapshot != nil, "replayed_records", rec.Replayed,
		"skipped_snapshots", len(rec.Skipped), "took", took, "snapshot_from", snapFrom,
		"torn_tails_cut", ls.TornTailRepairs, "torn_bytes_cut", ls.TornBytesCut)
	log.Start()
	if cfg.custody == "record" {
		logger.Warn("custody record: every USDC deposit is credited and every withdrawal sent without an operator; for tests and demos only")
	}
	n = &node{lock: lock, log: log, srv: srv}
	n.eng = core.NewEngine(st, log, cfg.engineConfig())
	n.snaps = snapshot.NewManager(n.eng.State(), log, snapshot.Options{
		Dir: snapDir, Every: cfg.snapshotEvery, EveryRecords: cfg.snapshotEveryRecords, CPUShare: cfg.snapshotCPUShare,
		CommitInterval: cfg.snapCommitInterval, ThreadNice: cfg.snapshotNice, Logger: logger,
	}, rec.Snapshot)
	logMetrics.Watch(reg, log)
	metrics.RegisterEngine(reg, n.eng)
	metrics.RegisterCustody(reg, n.eng, time.Now)
	metrics.RegisterSnapshots(reg, n.snaps, started, time.Now)
	metrics.RegisterRecovery(reg, metrics.Recovery{Replayed: rec.Replayed, Took: took,
		SnapshotUsed: rec.Snapshot != nil, SkippedSnapshots: len(rec.Skipped)})
	key, err := loadDeviceKey(cfg.dataDir)
	if err != nil {
		n.eng.Close()
		return nil, errors.Join(err, log.Close())
	}
	srv.SetDeviceKey(key)
	srv.Attach(n.eng)
	return n, nil
}

// recoverState recovers the state from the snapshots in snapDir and the
// log, with the collector set for it, and reports how long the recovery
// took, the collection after it left out.
func recoverState(snapDir string, log *wal.Log, logger *slog.Logger) (*core.State, snapshot.Recovered, time.Duration, error) {
	began := time.Now()
	// Recovery builds the whole state from nothing, so at the usual target
	// the collector runs a cycle every time the heap doubles and marks the
	// growing state again each time: a third of the CPU of a restart with
	// 1,000,000 accounts and 1,000,000 records to replay. A larger target
	// while recovering, and the usual one after (docs/PERFORMANCE.md,
	// "Stalls of the trade path").
	gcPercent := debug.SetGCPercent(snapshot.RecoveryGCPercent)
	st, rec, err := snapshot.Recover(nil, snapDir, log, logger)
	debug.SetGCPercent(gcPercent)
	if err != nil {
		return nil, rec, 0, fmt.Errorf("recover: %w", err)
	}
	took := time.Since(began)
	// Recovery leaves its garbage in the heap (the snapshot file's bytes,
	// the decoded records: 180 MB over a live state of 666 MB with
	// 1,000,000 accounts), and the collector's next cycle, due when the
	// heap is twice the live state, would come that much sooner, while
	// trading: 46.8-48.7 s after the start at 17,431 trades/s, against 87 s.
	// Collected now, before the node serves, it costs one mark of the
	// state (19-32 ms) in the time to ready instead (docs/PERFORMANCE.md,
	// "Recovery's garbage").
	runtime.GC()
	return st, rec, took, nil
}

// shutdown marks the server draining, keeps serving for drainDelay (so
// that load balancers see /readyz fail and stop sending), then stops the
// server (answering the requests in flight), the engine, writes a final
// snapshot and closes the log.
func (n *node) shutdown(logger *slog.Logger, drainDelay time.Duration) error {
	n.srv.Drain()
	logger.Info("draining", "delay", drainDelay)
	if drainDelay > 0 {
		time.Sleep(drainDelay)
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	var errs []error
	if err := n.srv.Shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	n.eng.Close()
	if h, err := n.snaps.Take(ctx); err != nil {
		errs = append(errs, fmt.Errorf("final snapshot: %w", err))
	} else {
		logger.Info("final snapshot", "through", h.Through)
	}
	if err := n.log.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close log: %w", err))
	}
	if err := n.lock.Release(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ensureAdmin creates the account "admin" with the admin role when it does
// not exist (README.md, -admin-password). Without a password given, it draws
// one and prints it once, to out. An existing admin's password is changed
// only when reset asks for it (-reset-admin-password), ending all its
// sessions; otherwise -admin-password leaves it as it is, and says so, so
// that a changed flag or environment never changes a password silently.
func ensureAdmin(ctx context.Context, eng *core.Engine, pw string, reset bool, out io.Writer, srv *transport.Server, logger *slog.Logger) error {
	if _, ok := eng.AccountByName("admin"); ok {
		switch {
		case reset:
			if err := srv.ResetPassword(ctx, "admin", pw); err != nil {
				return fmt.Errorf("reset admin password: %w", err)
			}
			logger.Warn("admin password reset by -reset-admin-password; every admin session ended")
		case pw != "":
			logger.Info("account admin exists: -admin-password does not change its password (use -reset-admin-password)")
		}
		return nil
	}
	generated := pw == ""
	if generated {
		var b [12]byte
		_, _ = rand.Read(b[:]) // never fails: Go 1.24 and later crash instead
		pw = hex.EncodeToString(b[:])
	}
	if err := srv.CreateAdmin(ctx, "admin", pw); err != nil {
		return fmt.Errorf("create admin account: %w", err)
	}
	if generated {
		if _, err := fmt.Fprintf(out, "marketd: created account admin with password %s (shown only this once)\n", pw); err != nil {
			return fmt.Errorf("print admin password: %w", err)
		}
	}
	return nil
}

// positions reports the log's and the snapshots' positions for the admin
// stats. Its fields are set after recovery, before the server opens its
// routes, and only read by them.
type positions struct {
	log   *wal.Log
	snaps *snapshot.Manager
}

// Positions implements transport.StatusSource.
func (p *positions) Positions() transport.Positions {
	st := p.log.Stats()
	out := transport.Positions{
		LogFirstSeq: p.log.FirstSeq(), LogLastSeq: p.log.LastSeq(), LogDurableSeq: p.log.Durable(),
		LogRecords: st.Records, LogBatches: st.Batches, LogFsyncs: st.Fsyncs,
	}
	if h, ok := p.snaps.Last(); ok {
		out.SnapshotFrom, out.SnapshotThrough, out.SnapshotAt = h.From, h.Through, h.CreatedAt.UnixNano()
	}
	return out
}
