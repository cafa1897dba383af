// Package procs sets the number of processors (GOMAXPROCS) on which the Go
// runtime runs goroutines, for marketd and for the handlers it is measured
// against: the runtime's default (the machine's CPUs, or the container's
// CPU limit) plus some spare ones. A goroutine in a system call keeps its
// processor until the runtime's monitor takes it away, at least 20 us
// later and often much more; the log writer spends most of its time in
// fsync, so with one processor per core a core sits idle while work waits
// (docs/PERFORMANCE.md, "The hops, core against the floor"). A spare
// processor lets the other goroutines use every core meanwhile.
package procs

import (
	"fmt"
	"runtime"
)

// DefaultSpare is the number of processors marketd runs beyond the
// runtime's default: one, for the log writer's fsync.
const DefaultSpare = 1

// MaxSpare bounds the spare processors asked for.
const MaxSpare = 256

// EnvVar is the environment variable of the Go runtime that sets the
// processors itself; when it is set, Set leaves the count as it is.
const EnvVar = "GOMAXPROCS"

// Set makes the processors the runtime's default plus spare, unless the
// environment (getenv) sets GOMAXPROCS, which wins. It returns the count
// in force; a second call gives the same count, not one more. Setting the
// count stops the runtime from following a change of the container's CPU
// limit while the process runs.
func Set(spare int, getenv func(string) string) (int, error) {
	if spare < 0 || spare > MaxSpare {
		return 0, fmt.Errorf("procs: %d spare processors is out of range 0-%d", spare, MaxSpare)
	}
	if getenv(EnvVar) != "" {
		return runtime.GOMAXPROCS(0), nil
	}
	runtime.SetDefaultGOMAXPROCS()
	if spare == 0 {
		return runtime.GOMAXPROCS(0), nil
	}
	n := runtime.GOMAXPROCS(0) + spare
	runtime.GOMAXPROCS(n)
	return n, nil
}

// ForRecovery returns the processors for a CPU-bound start-up from n, the
// count Set returned: recovery runs one worker per processor, and workers
// beyond the CPUs only take turns on them (docs/PERFORMANCE.md, first
// section: time to ready rose 13% on 3 processors on 2 CPUs). Without the
// spare ones, or, when the environment chose the count, at most the CPUs.
func ForRecovery(n, spare int, getenv func(string) string) int {
	if getenv(EnvVar) != "" {
		return max(min(n, runtime.NumCPU()), 1)
	}
	return max(n-spare, 1)
}

// HasSpare reports whether n processors, the count Set returned for spare,
// include one beyond the cores: the processor the log's writer may keep
// through its fsyncs (wal.Options.FsyncHoldsProcessor) while every core
// still has one for the other goroutines. When the environment chose the
// count, that is more processors than CPUs.
func HasSpare(n, spare int, getenv func(string) string) bool {
	if getenv(EnvVar) != "" {
		return n > runtime.NumCPU()
	}
	return spare > 0
}
