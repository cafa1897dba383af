// Command marketd-drill runs marketd's kill -9 drill: it starts marketd as
// a child on a data directory, drives bots with trades, splits, merges,
// key creations and revocations, deposits and withdrawals, kills the child
// with SIGKILL at a random moment, runs the offline checker on the
// directory, restarts the child and verifies that every acknowledged
// operation survived with its answer and that nothing else was applied
// (package marketd/bench/drill says what is checked). It repeats for
// -cycles cycles on the same growing directory, with snapshots taken
// between them, and prints one summary line:
//
//	K cycles, N acknowledged operations, 0 lost, recovery p50 X / max Y (...)
//
// Exit status: 0 when nothing was lost and nothing violated, 1 otherwise,
// 2 for bad flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"marketd/bench/drill"
	"marketd/internal/fstype"
)

func main() {
	o, keep, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "marketd-drill:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	os.Exit(run(ctx, o, keep))
}

func parseFlags(args []string) (drill.Options, bool, error) {
	o := drill.Options{Out: os.Stdout}
	var serverArgs string
	var keep bool
	fs := flag.NewFlagSet("marketd-drill", flag.ContinueOnError)
	fs.StringVar(&o.Binary, "marketd", "bin/marketd", "the marketd binary to drill")
	fs.StringVar(&o.DataDir, "data", "", "data directory, new or empty (default: a new temporary one, removed after a drill that passed)")
	fs.IntVar(&o.Cycles, "cycles", 10, "kill and restart cycles")
	fs.IntVar(&o.Bots, "bots", 8, "bots sending operations concurrently")
	fs.IntVar(&o.Markets, "markets", 3, "markets traded")
	fs.DurationVar(&o.MinLoad, "min-load", 100*time.Millisecond, "shortest load before a kill")
	fs.DurationVar(&o.MaxLoad, "max-load", 1500*time.Millisecond, "longest load before a kill")
	fs.IntVar(&o.SnapshotEveryRecords, "snapshot-every-records", 200, "the child's -snapshot-every-records: low, so that snapshots happen between kills")
	fs.StringVar(&serverArgs, "server-args", "", "more flags for marketd, space-separated")
	fs.Uint64Var(&o.Seed, "seed", 0, "seed of the drill's PCG (default: random, printed)")
	fs.BoolVar(&keep, "keep", false, "keep a temporary data directory even when the drill passed")
	if err := fs.Parse(args); err != nil {
		return o, false, err
	}
	if fs.NArg() > 0 {
		return o, false, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	o.ServerArgs = strings.Fields(serverArgs)
	if o.Seed == 0 {
		o.Seed = rand.Uint64()
	}
	switch {
	case o.Cycles < 1 || o.Cycles > 100_000:
		return o, false, fmt.Errorf("-cycles: %d is out of range 1-100000", o.Cycles)
	case o.Bots < 1 || o.Bots > 1000:
		return o, false, fmt.Errorf("-bots: %d is out of range 1-1000", o.Bots)
	case o.Markets < 1 || o.Markets > 1000:
		return o, false, fmt.Errorf("-markets: %d is out of range 1-1000", o.Markets)
	case o.MinLoad < 0 || o.MaxLoad < o.MinLoad:
		return o, false, fmt.Errorf("-min-load and -max-load: want 0 <= %v <= %v", o.MinLoad, o.MaxLoad)
	case o.SnapshotEveryRecords < 1:
		return o, false, fmt.Errorf("-snapshot-every-records: must be positive")
	}
	return o, keep, nil
}

func run(ctx context.Context, o drill.Options, keep bool) int {
	temporary := o.DataDir == ""
	if temporary {
		dir, err := os.MkdirTemp("", "marketd-drill-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "marketd-drill:", err)
			return 1
		}
		o.DataDir = dir
	} else if entries, err := os.ReadDir(o.DataDir); err == nil && len(entries) > 0 {
		fmt.Fprintf(os.Stderr, "marketd-drill: -data %s is not empty: the drill's model starts from an empty state\n", o.DataDir)
		return 2
	}
	if fs, inMemory, err := fstype.Of(o.DataDir); err == nil && inMemory {
		fmt.Fprintf(os.Stderr, "marketd-drill: note: %s is on %s\n", o.DataDir, fs)
	}
	fmt.Printf("marketd-drill: %s, %d cycles, %d bots, %d markets, load %v-%v before each kill, snapshot every %d records, seed %d, data %s\n",
		o.Binary, o.Cycles, o.Bots, o.Markets, o.MinLoad, o.MaxLoad, o.SnapshotEveryRecords, o.Seed, o.DataDir)
	sum, err := drill.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "marketd-drill:", err)
		if sum == nil {
			return 1
		}
	}
	for _, v := range sum.Violations {
		fmt.Println("violation:", v)
	}
	fmt.Println(sum.Line())
	if err != nil || !sum.OK() {
		fmt.Printf("marketd-drill: FAILED; the data directory and the server's output (marketd.log) are kept in %s\n", o.DataDir)
		return 1
	}
	if temporary && !keep {
		if err := os.RemoveAll(o.DataDir); err != nil {
			fmt.Fprintln(os.Stderr, "marketd-drill:", err)
			return 1
		}
	}
	return 0
}
