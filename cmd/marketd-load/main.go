// Command marketd-load drives a marketd server with simulated bots and
// reports throughput and latency: against a server at -addr, or one it
// starts itself with -spawn (a loopback port, a temporary data directory,
// fsync on, keys of the unlimited tier, per-client limits out of the way).
//
// Setup goes through the public API: the bots register and create keys,
// the admin creates the markets. Then, for -duration, a mix of reads and
// writes (-mix) over the markets (-skew), in a closed loop over -conns
// connections or, with -rate, an open loop whose latency runs from each
// request's due time. With -compare, the same load runs in alternating
// rounds against marketd, a built-in no-op fasthttp handler and one that
// only waits for a group-committed fsync in the same data directory (both
// served by a child process of this binary, -serve-baselines, unless
// -baselines in-process), and the throughput ratios are printed. Before
// each warm-up the machine's dirty pages are written to disk (-sync). Each run
// reports the CPU time per request of this process and of the server's.
// With -pause-every, the server's process is stopped on a schedule during
// each measured run, the same for every target. Afterwards the invariants are checked
// through the API. The report goes to stdout, as JSON to -json, and as
// PNG and SVG charts to -plot.
//
// Exit status: 0 when the run completed and every invariant held, 1
// otherwise, 2 for bad flags.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"marketd/internal/procs"
)

func main() {
	cfg, err := parseConfig(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "marketd-load:", err)
		os.Exit(2)
	}
	// First, so that the baselines' child below runs on the count its
	// parent set (its GOMAXPROCS, which wins).
	if err := setProcs(cfg.spareProcs); err != nil {
		fmt.Fprintln(os.Stderr, "marketd-load:", err)
		os.Exit(1)
	}
	if cfg.serveBaselines != "" {
		if err := serveBaselinesChild(cfg.serveBaselines, cfg.floors, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "marketd-load: baselines:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "marketd-load:", err)
		os.Exit(1)
	}
}

// setProcs sets the processors this process runs on (procs.Set), and
// GOMAXPROCS in its environment to the same count, so that every child it
// starts, the spawned marketd and the handlers it is compared with, runs on
// as many: a comparison at different counts would be unfair.
func setProcs(spare int) error {
	n, err := procs.Set(spare, os.Getenv)
	if err != nil {
		return err
	}
	if err := os.Setenv(procs.EnvVar, strconv.Itoa(n)); err != nil {
		return fmt.Errorf("cannot set %s: %w", procs.EnvVar, err)
	}
	return nil
}
