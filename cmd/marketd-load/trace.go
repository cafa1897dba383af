package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime/trace"
	"sync"
	"time"
)

// tracer writes execution traces (runtime/trace, read with `go tool
// trace`) of the first measured run of marketd: the server's, from the
// /debug/pprof/trace of its side listener, and marketd-load's own, since a
// stall of the load generator shows as a slow request too. With -compare
// it also traces marketd-load during the fsync-only handler's first
// measured run: with -baselines in-process the handler runs in this
// process, so that trace holds its commit cycle beside marketd's
// (docs/PERFORMANCE.md, "The closed loop's commit cycle"); otherwise it holds
// the load generator's side of that run.
type tracer struct {
	prefix      string
	metricsAddr string
	seconds     int
	out         io.Writer
	// handlerHere is true when the baseline handlers run in this process.
	handlerHere bool

	once, fsyncOnce sync.Once
	failures
}

func newTracer(prefix, metricsAddr string, run time.Duration, handlerHere bool, out io.Writer) *tracer {
	// The server's trace must outlast the run: one second more than it,
	// the slowest answers of its last second included.
	return &tracer{prefix: prefix, metricsAddr: metricsAddr, seconds: int(math.Ceil(run.Seconds())) + 1,
		handlerHere: handlerHere, out: out}
}

// measured is load.Options.Measured: it starts both traces as marketd's
// first measured run begins, and its result stops them after the run; the
// fsync-only handler's first measured run gets a trace of this process.
func (tr *tracer) measured(target string) func() {
	var done func()
	switch target {
	case "marketd":
		tr.once.Do(func() { done = tr.start() })
	case "fsync-only":
		tr.fsyncOnce.Do(func() {
			path := tr.prefix + "-fsync-only.trace"
			began := time.Now()
			stop := tr.startLocal(path)
			done = func() {
				stop()
				where := "the handler in its own process, not traced"
				if tr.handlerHere {
					where = "the handler in marketd-load"
				}
				fmt.Fprintf(tr.out, "marketd-load: trace of marketd-load in the fsync-only handler's first measured run (%s) began %s UTC: %s\n",
					where, began.UTC().Format("15:04:05.000000"), path)
			}
		})
	}
	return done
}

// startLocal starts tracing this process into path and returns the
// function that stops it.
func (tr *tracer) startLocal(path string) (stop func()) {
	stop, _ = tr.record(path, "trace marketd-load", trace.Start, trace.Stop) // a failure is kept
	return stop
}

// start starts both traces and returns the function that waits for them.
func (tr *tracer) start() func() {
	serverPath, clientPath := tr.prefix+"-server.trace", tr.prefix+"-client.trace"
	began := time.Now()
	serverDone := make(chan error, 1)
	go func() { serverDone <- fetchTrace(tr.metricsAddr, tr.seconds, serverPath) }()
	stop := tr.startLocal(clientPath)
	return func() {
		stop()
		if err := <-serverDone; err != nil {
			tr.fail(err)
		}
		fmt.Fprintf(tr.out, "marketd-load: traces of marketd's first measured run began %s UTC: %s (the server, %d s), %s (marketd-load); open with go tool trace\n",
			began.UTC().Format("15:04:05.000000"), serverPath, tr.seconds, clientPath)
	}
}

// fetchTrace writes the server's execution trace of the next seconds to
// path.
func fetchTrace(metricsAddr string, seconds int, path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds)*time.Second+time.Minute)
	defer cancel()
	url := fmt.Sprintf("http://%s/debug/pprof/trace?seconds=%d", metricsAddr, seconds)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("trace the server: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("trace the server: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("trace the server: %s: %s", resp.Status, msg)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("trace the server: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		return errors.Join(fmt.Errorf("trace the server: %w", err), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("trace the server: %w", err)
	}
	return nil
}
