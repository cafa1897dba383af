package spawn

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

const (
	// readyPollInterval is how often WaitReady asks /readyz.
	readyPollInterval = 5 * time.Millisecond
	// maxLineBytes bounds one line of the child's output.
	maxLineBytes = 1 << 20
)

// ErrExited reports a child that exited before it was ready.
var ErrExited = errors.New("spawn: marketd exited")

// listeningRE finds the address in marketd's "listening" log line, and
// metricsRE the -metrics-addr listener's in its "metrics listening" line.
var (
	listeningRE = regexp.MustCompile(`\bmsg=listening\b.*\baddr=(\S+)`)
	metricsRE   = regexp.MustCompile(`\bmsg="metrics listening".*\baddr=(\S+)`)
)

// UnlimitedClientArgs are the flags that lift marketd's per-client and
// per-account limits (docs/API.md, "Rate limits"), for a tool whose every
// connection, registration, login and key creation comes from one
// loopback address and a few accounts: the crash drill and
// marketd-load's -spawn.
var UnlimitedClientArgs = []string{
	"-anon-rate", "-1",
	"-registrations-per-client", "-1",
	"-password-checks-per-client", "-1",
	"-key-changes-per-account", "-1",
	"-max-conns-per-client", "-1",
}

// adminPasswordEnv is marketd's variable for -admin-password (its
// MARKETD_<FLAG> rule, README.md).
const adminPasswordEnv = "MARKETD_ADMIN_PASSWORD"

// Options says how to start marketd.
type Options struct {
	// Binary is the marketd executable.
	Binary string
	// DataDir is its -data directory.
	DataDir string
	// Args follow -addr 127.0.0.1:0 and -data.
	Args []string
	// Env holds KEY=VALUE pairs added to this process's environment, from
	// which every MARKETD_ variable is removed first (so that only Args
	// configure the child).
	Env []string
	// AdminPassword, when set, is the child's admin password. It goes to
	// the child in its environment (MARKETD_ADMIN_PASSWORD), never on its
	// command line, which any local user can read (ps, /proc/PID/cmdline).
	AdminPassword string
	// LogPath is the file the child's stdout and stderr are appended to;
	// empty: discarded.
	LogPath string
}

// Process is one running marketd child.
type Process struct {
	cmd     *exec.Cmd
	addr    string
	started time.Time
	logFile *os.File
	exited  chan struct{} // closed once cmd.Wait returned
	waitErr error         // read only after exited is closed
	copying sync.WaitGroup

	mu          sync.Mutex
	metricsAddr string // guarded by mu
}

// Start starts marketd and returns once it logged its listening address,
// or ctx is done, or it exited.
func Start(ctx context.Context, o Options) (*Process, error) {
	p := &Process{exited: make(chan struct{})}
	args := append([]string{"-addr", "127.0.0.1:0", "-data", o.DataDir}, o.Args...)
	p.cmd = exec.Command(o.Binary, args...)
	p.cmd.Env = append(cleanEnv(), o.Env...)
	if o.AdminPassword != "" {
		p.cmd.Env = append(p.cmd.Env, adminPasswordEnv+"="+o.AdminPassword)
	}
	var sink io.Writer = io.Discard
	if o.LogPath != "" {
		f, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("spawn: open the child's log: %w", err)
		}
		p.logFile, sink = f, f
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, p.closeLog(fmt.Errorf("spawn: stdout pipe: %w", err))
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, p.closeLog(fmt.Errorf("spawn: stderr pipe: %w", err))
	}
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, p.closeLog(fmt.Errorf("spawn: start %s: %w", o.Binary, err))
	}
	addrs := make(chan string, 2)
	var sinkMu sync.Mutex
	for _, r := range []io.Reader{stdout, stderr} {
		p.copying.Add(1)
		go func() {
			defer p.copying.Done()
			sc := bufio.NewScanner(r)
			sc.Buffer(nil, maxLineBytes)
			found := false
			for sc.Scan() {
				line := sc.Text()
				sinkMu.Lock()
				_, _ = fmt.Fprintln(sink, line) // the log is for investigation; a failed write loses only it
				sinkMu.Unlock()
				if m := listeningRE.FindStringSubmatch(line); m != nil && !found {
					found = true
					addrs <- m[1]
				}
				if m := metricsRE.FindStringSubmatch(line); m != nil {
					p.mu.Lock()
					p.metricsAddr = m[1]
					p.mu.Unlock()
				}
			}
		}()
	}
	go func() {
		p.copying.Wait() // Wait closes the pipes: read them to the end first
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	select {
	case p.addr = <-addrs:
		return p, nil
	case <-p.exited:
		return nil, p.closeLog(fmt.Errorf("%w before listening: %v", ErrExited, p.waitErr))
	case <-ctx.Done():
		return nil, errors.Join(fmt.Errorf("spawn: waiting for marketd to listen: %w", context.Cause(ctx)), p.Kill())
	}
}

// cleanEnv returns this process's environment without MARKETD_ variables.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MARKETD_") {
			env = append(env, kv)
		}
	}
	return env
}

func (p *Process) closeLog(err error) error {
	if p.logFile != nil {
		if cerr := p.logFile.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("spawn: close the child's log: %w", cerr))
		}
		p.logFile = nil
	}
	return err
}

// Addr returns the child's host:port.
func (p *Process) Addr() string { return p.addr }

// MetricsAddr returns the host:port of the child's -metrics-addr listener
// once it logged it (before it is ready), or "" when it has none.
func (p *Process) MetricsAddr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.metricsAddr
}

// Pid returns the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Started returns when the child was started.
func (p *Process) Started() time.Time { return p.started }

// Exited is closed once the child exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// WaitReady waits until the child answers GET /readyz with 200 (or with
// 404, from a marketd without it, which listens only once recovered), and
// returns the time since it was started.
func (p *Process) WaitReady(ctx context.Context) (time.Duration, error) {
	hc := &fasthttp.HostClient{Addr: p.addr, ReadTimeout: time.Second, WriteTimeout: time.Second}
	defer hc.CloseIdleConnections()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + p.addr + "/readyz")
	t := time.NewTicker(readyPollInterval)
	defer t.Stop()
	for {
		if err := hc.Do(req, resp); err == nil {
			switch resp.StatusCode() {
			case http.StatusOK, http.StatusNotFound:
				return time.Since(p.started), nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("spawn: waiting for marketd to be ready: %w", context.Cause(ctx))
		case <-p.exited:
			return 0, fmt.Errorf("%w before it was ready: %v", ErrExited, p.waitErr)
		case <-t.C:
		}
	}
}

// Kill kills the child with SIGKILL and waits for it to exit.
func (p *Process) Kill() error {
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return p.closeLog(fmt.Errorf("spawn: kill marketd: %w", err))
	}
	<-p.exited
	return p.closeLog(nil)
}

// Stop asks the child to stop with SIGTERM, waits until it exited or ctx
// is done (then kills it), and returns an error unless it exited 0.
func (p *Process) Stop(ctx context.Context) error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return errors.Join(fmt.Errorf("spawn: stop marketd: %w", err), p.Kill())
	}
	select {
	case <-p.exited:
	case <-ctx.Done():
		return errors.Join(fmt.Errorf("spawn: marketd did not stop: %w", context.Cause(ctx)), p.Kill())
	}
	if p.waitErr != nil {
		return p.closeLog(fmt.Errorf("spawn: marketd stopped: %w", p.waitErr))
	}
	return p.closeLog(nil)
}
