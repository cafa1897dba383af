// Command marketd runs the prediction-market trading service: it opens its
// listener on -addr (where /healthz, /readyz and /metrics answer at once),
// recovers the state from the newest snapshot and the write-ahead log under
// -data, then serves the HTTP API until SIGTERM or SIGINT, when it reports
// not ready, stops accepting, answers the requests in flight, flushes the
// log, writes a final snapshot and exits 0. A failed log makes it exit 3.
//
// `marketd check -data DIR` reads a data directory without changing it and
// checks it; see runCheck. `marketd backup -name NAME` asks a running
// server for an online backup; see runBackup.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"marketd/internal/procs"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "check":
			os.Exit(runCheck(os.Args[2:], os.Stdout, os.Stderr))
		case "backup":
			os.Exit(runBackup(os.Args[2:], os.Getenv, os.Stdout, os.Stderr))
		}
	}
	cfg, err := parseConfig(os.Args[1:], os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "marketd:", err)
		os.Exit(2)
	}
	logger := cfg.newLogger(os.Stderr)
	n, err := procs.Set(cfg.spareProcs, os.Getenv)
	if err != nil {
		logger.Error("marketd: processors", "err", err)
		os.Exit(2)
	}
	// Recovery on the CPUs' count, the spare processors once it is done
	// (run, servingProcs).
	recovering := procs.ForRecovery(n, cfg.spareProcs, os.Getenv)
	runtime.GOMAXPROCS(recovering)
	cfg.servingProcs = n
	cfg.holdProcessor = procs.HasSpare(n, cfg.spareProcs, os.Getenv)
	logger.Info("processors", "gomaxprocs", n, "recovering", recovering, "cpus", runtime.NumCPU())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, cfg, logger, os.Stdout); err != nil {
		logger.Error("marketd stopped", "err", err)
		if errors.Is(err, errLogFailed) {
			os.Exit(3)
		}
		os.Exit(1)
	}
}
