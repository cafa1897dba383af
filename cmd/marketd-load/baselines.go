package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"marketd/bench/baseline"
	"marketd/internal/procs"
)

const (
	// baselinesInProcess and baselinesProcess are the values of
	// -baselines.
	baselinesInProcess = "in-process"
	baselinesProcess   = "process"
	// baselineLinePrefix starts the lines in which a baseline child names
	// a handler and its address, "baseline NAME ADDR", and its processors,
	// "baseline processors N" (baselineProcsName).
	baselineLinePrefix = "baseline "
	// baselineProcsName names the child's processor count (GOMAXPROCS) in
	// its first line.
	baselineProcsName = "processors"
	// baselineStartTimeout bounds the child's start, until it named both
	// addresses.
	baselineStartTimeout = 30 * time.Second
)

// baselineNames are the handlers a baseline child serves, in the order of
// its lines.
var baselineNames = []string{"noop", "fsync-only", leastTradeName}

// leastTradeName is the least-trade handler's name (bench/baseline).
const leastTradeName = "least-trade"

// baselineServer is where the baseline handlers are served: their
// addresses, the process serving them (0: this one), its processors
// (GOMAXPROCS) and how to stop them.
type baselineServer struct {
	addrs map[string]string // by handler name
	pid   int
	procs int
	close func() error
}

// serveBaselinesHere serves the no-op, the fsync-only and the least-trade
// handlers (their files in dataDir, and the least-trade handler's keys
// and markets from dataDir's baseline.LeastSetupFile) in this process, on
// loopback ports, the last two committing with fo's interval
// (-floor-commit-interval). fo's ballast is not held here: this process
// would hold it for the load generator too (serveBaselinesChild holds it).
func serveBaselinesHere(dataDir string, fo floorOptions) (*baselineServer, error) {
	var servers []*baseline.Server
	closeAll := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		var errs []error
		for _, s := range servers {
			errs = append(errs, s.Close(ctx))
		}
		return errors.Join(errs...)
	}
	ln1, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	servers = append(servers, baseline.ServeNoop(ln1))
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("listen: %w", err), closeAll())
	}
	fsyncOnly, err := baseline.ServeFsyncOnly(ln2, dataDir, fo.commit())
	if err != nil {
		return nil, errors.Join(err, ln2.Close(), closeAll())
	}
	servers = append(servers, fsyncOnly)
	setup, err := baseline.ReadLeastSetup(filepath.Join(dataDir, baseline.LeastSetupFile))
	if err != nil {
		return nil, errors.Join(err, closeAll())
	}
	ln3, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("listen: %w", err), closeAll())
	}
	least, err := baseline.ServeLeastTrade(ln3, dataDir, setup, fo.commit())
	if err != nil {
		return nil, errors.Join(err, ln3.Close(), closeAll())
	}
	servers = append(servers, least)
	bs := &baselineServer{addrs: make(map[string]string), procs: runtime.GOMAXPROCS(0), close: closeAll}
	for _, s := range servers {
		bs.addrs[s.Name()] = s.Addr()
	}
	return bs, nil
}

// serveBaselinesChild is the child's side of startBaselineProcess: it
// serves the handlers, names its processors and their addresses on out,
// and serves until in reaches its end (the parent closed it, or exited),
// holding fo's ballast (holdBallast) meanwhile.
func serveBaselinesChild(dataDir string, fo floorOptions, in io.Reader, out io.Writer) error {
	ballast := holdBallast(fo.ballastBytes)
	defer runtime.KeepAlive(ballast)
	bs, err := serveBaselinesHere(dataDir, fo)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(out, "%s%s %d\n", baselineLinePrefix, baselineProcsName, bs.procs); err != nil {
		return errors.Join(fmt.Errorf("name the baselines' processors: %w", err), bs.close())
	}
	for _, name := range baselineNames {
		if _, err := fmt.Fprintf(out, "%s%s %s\n", baselineLinePrefix, name, bs.addrs[name]); err != nil {
			return errors.Join(fmt.Errorf("name the baselines' addresses: %w", err), bs.close())
		}
	}
	_, err = io.Copy(io.Discard, in)
	return errors.Join(err, bs.close())
}

// startBaselineProcess serves the baseline handlers from a child process
// of this binary (-serve-baselines), so that they run in a process of
// their own, as marketd does: the load generator's process then holds only
// the load generator whichever target it drives, and its CPU per request
// and the server's are measured apart for each (load.CPUUse). The child
// runs on nprocs processors, given as its GOMAXPROCS as the spawned
// marketd's is (spawnServer), not left to whatever environment this
// process has: handlers on another count than marketd's would make the
// comparison unfair. The child names its count, and a different one is
// an error. It runs its handlers as fo says (-floor-commit-interval,
// -floor-ballast-bytes).
func startBaselineProcess(dataDir string, nprocs int, fo floorOptions) (*baselineServer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find marketd-load's binary for the baselines' process: %w", err)
	}
	cmd := exec.Command(self, append([]string{"-serve-baselines", dataDir}, fo.args()...)...)
	cmd.Env = append(os.Environ(), procs.EnvVar+"="+strconv.Itoa(nprocs))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("baselines' process: stdin pipe: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("baselines' process: stdout pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the baselines' process: %w", err)
	}
	drained := make(chan struct{}) // closed once the reader below is done with stdout
	stop := func() error {
		err := stdin.Close()
		// Wait closes stdout: every read of it must be over first
		// (os/exec). Closing stdin ends the child, or the caller killed
		// it, so the reader meets the pipe's end.
		<-drained
		if werr := cmd.Wait(); werr != nil {
			err = errors.Join(err, fmt.Errorf("baselines' process: %w", werr))
		}
		return err
	}
	bs := &baselineServer{addrs: make(map[string]string), pid: cmd.Process.Pid, close: stop}
	named := make(chan error, 1)
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stdout)
		for (bs.procs == 0 || len(bs.addrs) < len(baselineNames)) && sc.Scan() {
			f := strings.Fields(strings.TrimPrefix(sc.Text(), baselineLinePrefix))
			if !strings.HasPrefix(sc.Text(), baselineLinePrefix) || len(f) != 2 {
				named <- fmt.Errorf("baselines' process: unexpected line %q", sc.Text())
				return
			}
			if f[0] == baselineProcsName {
				n, err := strconv.Atoi(f[1])
				if err != nil || n < 1 {
					named <- fmt.Errorf("baselines' process: unexpected line %q", sc.Text())
					return
				}
				bs.procs = n
				continue
			}
			bs.addrs[f[0]] = f[1]
		}
		if bs.procs == 0 || len(bs.addrs) < len(baselineNames) {
			named <- fmt.Errorf("baselines' process: ended before naming its addresses: %v", sc.Err())
			return
		}
		named <- nil
		_, _ = io.Copy(io.Discard, stdout) // nothing more is written; drain until it exits
	}()
	select {
	case err = <-named:
	case <-time.After(baselineStartTimeout):
		err = fmt.Errorf("baselines' process: no addresses after %v", baselineStartTimeout)
	}
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, errors.Join(err, stop())
	}
	for _, name := range baselineNames {
		if bs.addrs[name] == "" {
			return nil, errors.Join(fmt.Errorf("baselines' process: no address for %s", name), stop())
		}
	}
	if bs.procs != nprocs {
		return nil, errors.Join(fmt.Errorf("baselines' process: runs on %d processors (GOMAXPROCS), want %d as marketd", bs.procs, nprocs), stop())
	}
	return bs, nil
}
