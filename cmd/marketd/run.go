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
	"time"

	"marketd/core"
	"marketd/internal/dirlock"
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
}

// run serves until ctx is done, then stops cleanly. out receives the
// generated admin password, once.
func run(ctx context.Context, cfg config, logger *slog.Logger, out io.Writer) error {
	n, err := start(cfg, logger)
	if err != nil {
		return err
	}
	if err := ensureAdmin(ctx, n.eng, cfg.adminPassword, out, n.srv); err != nil {
		return errors.Join(err, n.shutdown(logger))
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return errors.Join(fmt.Errorf("listen on %s: %w", cfg.addr, err), n.shutdown(logger))
	}
	logger.Info("listening", "addr", ln.Addr().String())
	serveErr := make(chan error, 1)
	go func() { serveErr <- n.srv.Serve(ln) }()
	snapCtx, cancelSnaps := context.WithCancel(context.Background())
	snapsDone := make(chan struct{})
	go func() {
		defer close(snapsDone)
		n.snaps.Run(snapCtx)
	}()
	var cause, logErr error
	select {
	case <-ctx.Done():
		logger.Info("stopping", "reason", context.Cause(ctx))
	case err := <-serveErr:
		cause = err
	case logErr = <-watchLog(snapCtx, n.log):
	}
	cancelSnaps() // ends the watcher too
	<-snapsDone
	if logErr != nil {
		// Nothing can be acknowledged any more: stop without the final
		// snapshot; the next start repairs and replays the log.
		return fmt.Errorf("%w: %w", errLogFailed, logErr)
	}
	return errors.Join(cause, n.shutdown(logger))
}

// start opens the log, recovers the state and builds the engine, the
// snapshot manager and the server.
func start(cfg config, logger *slog.Logger) (n *node, err error) {
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
	// wal.Open and snapshot.Recover create their directories.
	log, err := wal.Open(filepath.Join(cfg.dataDir, "wal"), wal.Options{NoFsync: cfg.fsync == "off", Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	snapDir := filepath.Join(cfg.dataDir, "snapshots")
	began := time.Now()
	st, rec, err := snapshot.Recover(nil, snapDir, log, logger)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("recover: %w", err), log.Close())
	}
	logger.Info("recovered", "snapshot", rec.Snapshot != nil, "replayed_records", rec.Replayed,
		"skipped_snapshots", len(rec.Skipped), "took", time.Since(began))
	log.Start()
	if cfg.custody == "record" {
		logger.Warn("custody record: every USDC deposit is credited and every withdrawal sent without an operator; for tests and demos only")
	}
	n = &node{lock: lock, log: log}
	n.eng = core.NewEngine(st, log, cfg.engineConfig())
	n.snaps = snapshot.NewManager(n.eng.State(), log, snapshot.Options{
		Dir: snapDir, Every: cfg.snapshotEvery, EveryRecords: cfg.snapshotEveryRecords, Logger: logger,
	}, rec.Snapshot)
	tc := cfg.transportConfig()
	tc.Logger = logger
	tc.Status = positions{log: log, snaps: n.snaps}
	n.srv = transport.New(n.eng, tc)
	return n, nil
}

// shutdown stops the server (answering the requests in flight), the
// engine, writes a final snapshot and closes the log.
func (n *node) shutdown(logger *slog.Logger) error {
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

// watchLog reports the log's failure, checked every 100 ms, until ctx is
// done.
func watchLog(ctx context.Context, log *wal.Log) <-chan error {
	ch := make(chan error, 1)
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := log.Err(); err != nil {
					ch <- err
					return
				}
			}
		}
	}()
	return ch
}

// ensureAdmin creates the account "admin" with the admin role when it does
// not exist (decisions.md section 2). Without a password given, it draws
// one and prints it once, to out.
func ensureAdmin(ctx context.Context, eng *core.Engine, pw string, out io.Writer, srv *transport.Server) error {
	if _, ok := eng.AccountByName("admin"); ok {
		return nil
	}
	generated := pw == ""
	if generated {
		var b [12]byte
		_, _ = rand.Read(b[:])
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
// stats.
type positions struct {
	log   *wal.Log
	snaps *snapshot.Manager
}

// Positions implements transport.StatusSource.
func (p positions) Positions() transport.Positions {
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
