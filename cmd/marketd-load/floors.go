package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"marketd/bench/baseline"
	"marketd/wal"
)

// The floors' flags, which the parent passes on to the baselines' child
// (floorOptions.args) and the child alone accepts beside -serve-baselines
// (checkServeBaselines).
const (
	floorCommitIntervalFlag = "floor-commit-interval"
	floorHoldProcessorFlag  = "floor-fsync-holds-processor"
	floorBallastBytesFlag   = "floor-ballast-bytes"
)

// maxFloorBallastBytes bounds -floor-ballast-bytes: 16 GiB, past any
// 1,000,000-account server's resident size tenfold.
const maxFloorBallastBytes = 16 << 30

// floorOptions is how the handlers marketd is compared with run, set by
// -floor-commit-interval, -floor-fsync-holds-processor and
// -floor-ballast-bytes, and handed to the baselines' child as the same
// flags.
type floorOptions struct {
	// commitInterval is the fsync-only and least-trade handlers' commit
	// interval (baseline.GroupCommit); 0: none.
	commitInterval time.Duration
	// holdProcessor has those handlers keep their processor through the
	// fsync and the wait, as marketd's log does with a spare processor
	// (baseline.CommitOptions).
	holdProcessor bool
	// ballastBytes is the memory the handlers' process holds untouched
	// (holdBallast); 0: none.
	ballastBytes int64
}

// check refuses a commit interval that marketd's log would refuse as its
// -commit-interval, and a ballast out of range.
func (o floorOptions) check() error {
	switch {
	case o.commitInterval < 0 || o.commitInterval > wal.MaxCommitInterval:
		return fmt.Errorf("-floor-commit-interval: %v is out of range 0-%v", o.commitInterval, wal.MaxCommitInterval)
	case o.ballastBytes < 0 || o.ballastBytes > maxFloorBallastBytes:
		return fmt.Errorf("-floor-ballast-bytes: %d is out of range 0-%d", o.ballastBytes, int64(maxFloorBallastBytes))
	}
	return nil
}

// args returns the flags that give o to the baselines' child.
func (o floorOptions) args() []string {
	return []string{"-" + floorCommitIntervalFlag, o.commitInterval.String(),
		"-" + floorHoldProcessorFlag + "=" + strconv.FormatBool(o.holdProcessor),
		"-" + floorBallastBytesFlag, fmt.Sprint(o.ballastBytes)}
}

// commit returns how the fsync-only and least-trade handlers commit.
func (o floorOptions) commit() baseline.CommitOptions {
	return baseline.CommitOptions{Interval: o.commitInterval, HoldProcessor: o.holdProcessor}
}

// holdBallast allocates n bytes and writes one byte of each page, so that
// the kernel gives them pages, then never touches them again: memory that
// a process holds and a load does not use, as marketd's accounts that no
// bot trades on. A kernel that watches pages' accesses (DAMON, on the
// machine of docs/PERFORMANCE.md) then finds it cold, as it finds
// marketd's. The caller keeps the slice for as long as it serves.
func holdBallast(n int64) []byte {
	if n <= 0 {
		return nil
	}
	b := make([]byte, n)
	page := os.Getpagesize()
	for i := 0; i < len(b); i += page {
		b[i] = 1
	}
	return b
}
