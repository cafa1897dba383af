package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/dirlock"
	"marketd/snapshot"
	"marketd/wal"
)

// Exit statuses of marketd check.
const (
	checkOK      = 0 // every invariant holds
	checkFailed  = 1 // recovery failed or an invariant is violated
	checkUsage   = 2 // bad flags
	checkInUse   = 3 // a server holds the directory
	checkIOError = 4 // the directory could not be read
)

// runCheck is `marketd check`: it reads a data directory without changing
// it, recovers the state as a server would (newest valid snapshot, then the
// log), runs the invariant checker and prints a summary; or, with
// -dump-from, prints the log's records in a range. It returns the exit
// status.
func runCheck(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("marketd check", flag.ContinueOnError)
	flags.SetOutput(stderr)
	dataDir := flags.String("data", "./data", "data directory to check (read only)")
	dumpFrom := flags.Uint64("dump-from", 0, "print the log's records from this sequence number instead of checking (1: from the first)")
	dumpTo := flags.Uint64("dump-to", 0, "with -dump-from: the last sequence number to print (0: to the end)")
	if err := flags.Parse(args); err != nil {
		return checkUsage
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "marketd check: unexpected arguments %q\n", flags.Args())
		return checkUsage
	}
	if *dumpTo != 0 && *dumpTo < *dumpFrom {
		fmt.Fprintf(stderr, "marketd check: -dump-to %d is before -dump-from %d\n", *dumpTo, *dumpFrom)
		return checkUsage
	}
	lock, err := dirlock.Shared(*dataDir)
	if errors.Is(err, dirlock.ErrLocked) {
		fmt.Fprintf(stderr, "marketd check: %s is in use by a running server: stop it first, or check a copy made by `marketd backup` (%v)\n", *dataDir, err)
		return checkInUse
	}
	if err != nil {
		fmt.Fprintf(stderr, "marketd check: %v\n", err)
		return checkIOError
	}
	defer func() {
		if err := lock.Release(); err != nil {
			fmt.Fprintf(stderr, "marketd check: %v\n", err)
		}
	}()
	if *dumpFrom > 0 {
		return dumpRecords(*dataDir, *dumpFrom, *dumpTo, stdout, stderr)
	}
	return checkDir(*dataDir, stdout, stderr)
}

// checkDir prints the summary of a data directory and returns the status.
func checkDir(dataDir string, out, stderr io.Writer) int {
	p := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	p("data directory: %s", dataDir)
	if _, err := os.Stat(dataDir); err != nil {
		fmt.Fprintf(stderr, "marketd check: %v\n", err)
		return checkIOError
	}
	log, err := wal.OpenReader(nil, filepath.Join(dataDir, "wal"))
	if err != nil {
		p("log: FAILED: %v", err)
		p("result: FAILED")
		return checkFailed
	}
	p("log: %d segment files, records %d..%d", len(log.Segments()), log.FirstSeq(), log.LastSeq())
	if t, ok := log.Torn(); ok {
		p("log: torn tail in %s at byte %d (seq %d, %d bytes: %s); not cut here: the next start copies the file aside and cuts it",
			t.File, t.Offset, t.Seq, t.Bytes, t.Cause)
	} else {
		p("log: no torn tail")
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, rec, err := snapshot.Inspect(nil, filepath.Join(dataDir, "snapshots"), log, quiet)
	for _, s := range rec.Skipped {
		p("snapshot skipped: %s", s)
	}
	if err != nil {
		p("recovery: FAILED: %v", err)
		p("result: FAILED")
		if errors.Is(err, fs.ErrPermission) {
			return checkIOError
		}
		return checkFailed
	}
	if h := rec.Snapshot; h != nil {
		p("snapshot: from %d through %d, %d chunks, taken %s", h.From, h.Through, h.Chunks, h.CreatedAt.Format(time.RFC3339))
	} else {
		p("snapshot: none used; the whole log was replayed")
	}
	p("records replayed: %d", rec.Replayed)
	printState(p, st.Canonical())
	results, err := st.CheckReport()
	failed := 0
	for _, r := range results {
		if r.Holds() {
			p("invariant ok: %s", r.Name)
		} else {
			failed++
			p("invariant FAILED (%d violations): %s", r.Violations, r.Name)
		}
	}
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			p("  %s", line)
		}
	}
	if failed > 0 || err != nil {
		p("result: FAILED")
		return checkFailed
	}
	p("result: OK")
	return checkOK
}

// printState prints the counts and totals of a state's canonical image.
func printState(p func(string, ...any), img *core.Record) {
	p("accounts: %d, api keys: %d, sessions: %d", len(img.Accounts), len(img.Keys), len(img.Sessions))
	var byStatus [core.NumStatuses]int
	var balances, collateral [money.NumCurrencies]money.Amount
	var overflow error
	add := func(sum *money.Amount, a money.Amount) {
		s, err := sum.Add(a)
		if err != nil {
			overflow = errors.Join(overflow, err)
			return
		}
		*sum = s
	}
	for _, m := range img.Markets {
		if m.Info != nil && int(m.Info.Status) < core.NumStatuses {
			byStatus[m.Info.Status]++
		}
		for _, b := range m.Books {
			add(&collateral[b.Currency], b.Collateral)
		}
	}
	for _, a := range img.Accounts {
		for _, b := range a.Balances {
			add(&balances[b.Currency], b.After)
		}
	}
	if overflow != nil {
		p("totals: %v (the invariant checker reports the same)", overflow)
	}
	var parts []string
	for s := range core.NumStatuses {
		parts = append(parts, fmt.Sprintf("%d %s", byStatus[s], core.Status(s)))
	}
	p("markets: %d (%s)", len(img.Markets), strings.Join(parts, ", "))
	for cur := range money.NumCurrencies {
		var minted, burned money.Amount
		if img.Supply != nil {
			minted, burned = img.Supply.Minted[cur], img.Supply.Burned[cur]
		}
		p("currency %s: minted %s, burned %s, account balances (house included) %s, market collateral %s",
			money.Currency(cur), minted, burned, balances[cur], collateral[cur])
	}
}
