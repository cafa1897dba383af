package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sync"
)

// profiler writes a CPU profile of marketd-load itself (runtime/pprof,
// read with `go tool pprof`) during the first measured run of each
// target, to PREFIX-TARGET.prof: the load generator's own cost per
// request, target by target, with the baselines in a process of their own
// (docs/PERFORMANCE.md, "The load generator's share of the closed loop").
type profiler struct {
	prefix string
	out    io.Writer

	mu   sync.Mutex
	done map[string]bool // targets profiled, guarded by mu
	failures
}

func newProfiler(prefix string, out io.Writer) *profiler {
	return &profiler{prefix: prefix, out: out, done: make(map[string]bool)}
}

// measured is load.Options.Measured.
func (p *profiler) measured(target string) func() {
	p.mu.Lock()
	first := !p.done[target]
	p.done[target] = true
	p.mu.Unlock()
	if !first {
		return nil
	}
	path := p.prefix + "-" + target + ".prof"
	stop, ok := p.record(path, "profile marketd-load", pprof.StartCPUProfile, pprof.StopCPUProfile)
	if !ok {
		return nil
	}
	return func() {
		stop()
		fmt.Fprintf(p.out, "marketd-load: CPU profile of marketd-load in %s's first measured run: %s\n", target, path)
	}
}

// failures collects what failed in the tracer's or profiler's goroutines,
// for the run to return once they are done.
type failures struct {
	mu   sync.Mutex
	errs []error // guarded by mu
}

func (f *failures) fail(err error) {
	f.mu.Lock()
	f.errs = append(f.errs, err)
	f.mu.Unlock()
}

// err returns what failed, if anything.
func (f *failures) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}

// record creates path and starts writing this process's trace or profile
// into it (start, which stop ends), and returns the function that stops
// it and closes the file, and whether it started; what fails is kept, as
// what.
func (f *failures) record(path, what string, start func(io.Writer) error, stop func()) (func(), bool) {
	file, err := os.Create(path)
	if err == nil {
		if err = start(file); err != nil {
			err = errors.Join(err, file.Close())
		}
	}
	if err != nil {
		f.fail(fmt.Errorf("%s: %w", what, err))
		return func() {}, false
	}
	return func() {
		stop()
		if err := file.Close(); err != nil {
			f.fail(fmt.Errorf("%s: %w", what, err))
		}
	}, true
}

// both returns a load.Options.Measured that calls a and b (either may be
// nil) and, after the run, both of their results in the reverse order.
func both(a, b func(string) func()) func(string) func() {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(target string) func() {
		da, db := a(target), b(target)
		return func() {
			if db != nil {
				db()
			}
			if da != nil {
				da()
			}
		}
	}
}
