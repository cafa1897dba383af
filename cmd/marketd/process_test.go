package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests run the real binary, built once by TestMain, as a
// child process on 127.0.0.1:0 and talk HTTP to it. This file is their
// harness: build, start, wait for the listening line, stop by signal, and
// show the child's output when a test fails.

const (
	// startTimeout bounds the wait for the listening line. Recovery of
	// these tests' few records takes milliseconds; the margin is for a
	// race-instrumented binary on a loaded 2-core machine.
	startTimeout = 30 * time.Second
	// exitTimeout bounds the wait for a signalled child to exit.
	exitTimeout = 30 * time.Second
	// testPasswordCost is bcrypt's minimum: hashing is not under test.
	testPasswordCost = "4"
	// testAdminPassword is given with -admin-password unless a test asks
	// for a generated one.
	testAdminPassword = "admin-e2e-password"
	// maxLineBytes bounds one line of the child's output.
	maxLineBytes = 1 << 20
)

// binPath is the marketd binary TestMain built; set once before any test
// runs and only read afterwards.
var binPath string

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "marketd-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot create the build directory:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, "marketd")
	args := []string{"build", "-o", binPath}
	if raceBuild {
		// The server's own goroutines are then checked for races too:
		// cleanup fails a test whose child reported one.
		args = append(args, "-race")
	}
	// go test runs in the package directory: "." is cmd/marketd.
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot build marketd: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// procOptions says how to start a child.
type procOptions struct {
	// dataDir is the -data directory; required.
	dataDir string
	// args follow -addr, -data, -password-cost and -admin-password.
	args []string
	// env holds KEY=VALUE pairs added to the test's environment, from which
	// every MARKETD_ variable is removed first.
	env []string
	// generatedAdmin leaves out -admin-password, so that the server draws
	// one (or finds the admin account already there).
	generatedAdmin bool
	// wrapper, when set, is a command line that runs the server: the
	// server's path and arguments are appended to it (strace).
	wrapper []string
	// mayDie lets the child exit before it is ready: startProc then
	// returns it with an empty addr instead of failing the test.
	mayDie bool
	// noWaitReady returns once the listener is open, before recovery ends.
	noWaitReady bool
}

// proc is one running marketd child.
type proc struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	stdout *lineLog
	stderr *lineLog
	exited chan struct{} // closed once cmd.Wait returned
	// waitErr is cmd.Wait's result; read only after exited is closed.
	waitErr error
	addr    string // host:port from the listening line
	group   bool   // the child leads a process group (a wrapper runs the server)
}

// signal sends sig to the child, or to its whole process group.
func (p *proc) signal(sig syscall.Signal) error {
	if p.group {
		return syscall.Kill(-p.cmd.Process.Pid, sig)
	}
	return p.cmd.Process.Signal(sig)
}

// listeningRE finds the listening address in a line of either log format.
var listeningRE = regexp.MustCompile(`\bmsg=listening addr=(\S+)|"msg":"listening","addr":"([^"]+)"`)

// readyRE finds the line logged once recovery is done and every route
// serves; the listener opens before recovery (docs/API.md, "Health").
var readyRE = regexp.MustCompile(`\bmsg=ready\b|"msg":"ready"`)

// startProc starts marketd and returns once it logged its listening
// address. The child is killed at the end of the test if still running;
// its output is logged when the test failed.
func startProc(t *testing.T, name string, o procOptions) *proc {
	t.Helper()
	args := []string{"-addr", "127.0.0.1:0", "-data", o.dataDir, "-password-cost", testPasswordCost}
	if !o.generatedAdmin {
		args = append(args, "-admin-password", testAdminPassword)
	}
	// Every test client is 127.0.0.1: the per-address limits are off
	// unless a test's own args set them (later flags win).
	args = append(args, "-registrations-per-client=-1", "-password-checks-per-client=-1", "-key-changes-per-account=-1")
	args = append(args, o.args...)
	cmdLine := append([]string{binPath}, args...)
	if len(o.wrapper) > 0 {
		cmdLine = append(append([]string(nil), o.wrapper...), cmdLine...)
	}
	p := &proc{t: t, name: name, cmd: exec.Command(cmdLine[0], cmdLine[1:]...),
		stdout: newLineLog(), stderr: newLineLog(), exited: make(chan struct{})}
	p.cmd.Env = append(cleanEnv(), o.env...)
	if len(o.wrapper) > 0 {
		// A tracer killed by SIGKILL leaves its tracee running: the child
		// gets a process group of its own, which signal kills whole.
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		p.group = true
	}
	if raceBuild && os.Getenv("GORACE") == "" {
		// A race-instrumented program sleeps a second before exiting so
		// that other goroutines can finish a report; a report still sets
		// exit code 66, which the tests check after every clean stop.
		p.cmd.Env = append(p.cmd.Env, "GORACE=atexit_sleep_ms=100")
	}
	outPipe, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("%s: stdout pipe: %v", name, err)
	}
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatalf("%s: stderr pipe: %v", name, err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: start %s: %v", name, binPath, err)
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); p.stdout.consume(outPipe) }()
	go func() { defer readers.Done(); p.stderr.consume(errPipe) }()
	go func() {
		// Wait may only be called once the pipes are read to the end.
		readers.Wait()
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.cleanup)

	line, err := p.stderr.waitFor(func(s string) bool { return listeningRE.MatchString(s) }, startTimeout)
	if err != nil && o.mayDie {
		select { // the output ended: the child is exiting
		case <-p.exited:
			return p
		case <-time.After(exitTimeout):
		}
	}
	if err != nil {
		t.Fatalf("%s: no listening line: %v\nargs: %q\n%s", name, err, args, p.output())
	}
	m := listeningRE.FindStringSubmatch(line)
	p.addr = m[1] + m[2]
	if !o.noWaitReady {
		_, err := p.stderr.waitFor(readyRE.MatchString, startTimeout)
		if err != nil && o.mayDie {
			select { // died while recovering
			case <-p.exited:
				p.addr = ""
				return p
			case <-time.After(exitTimeout):
			}
		}
		if err != nil {
			t.Fatalf("%s: no ready line: %v\nargs: %q\n%s", name, err, args, p.output())
		}
	}
	return p
}

// cleanEnv is the test's environment without MARKETD_ variables, so that a
// developer's settings cannot leak into a child.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MARKETD_") {
			env = append(env, kv)
		}
	}
	return env
}

func (p *proc) cleanup() {
	if !p.done() {
		_ = p.signal(syscall.SIGKILL)
		select {
		case <-p.exited:
		case <-time.After(exitTimeout):
			p.t.Errorf("%s: still running %v after SIGKILL", p.name, exitTimeout)
		}
	}
	if p.stderr.contains("WARNING: DATA RACE") {
		p.t.Errorf("%s: the server reported a data race", p.name)
	}
	if p.t.Failed() {
		p.t.Logf("%s (pid %d):\n%s", p.name, p.cmd.Process.Pid, p.output())
	}
}

func (p *proc) output() string {
	return fmt.Sprintf("--- stdout\n%s--- stderr\n%s---", p.stdout, p.stderr)
}

func (p *proc) done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL, a crash, and waits for the child to be gone.
func (p *proc) kill() {
	p.t.Helper()
	if err := p.signal(syscall.SIGKILL); err != nil {
		p.t.Fatalf("%s: SIGKILL: %v", p.name, err)
	}
	p.wait()
}

// terminate sends SIGTERM and returns the exit code.
func (p *proc) terminate() int {
	p.t.Helper()
	return p.stop(syscall.SIGTERM)
}

// stop sends sig and returns the exit code.
func (p *proc) stop(sig syscall.Signal) int {
	p.t.Helper()
	if err := p.signal(sig); err != nil {
		p.t.Fatalf("%s: %v: %v", p.name, sig, err)
	}
	return p.wait()
}

// wait waits for the child to exit and returns its exit code (-1 when
// killed by a signal).
func (p *proc) wait() int {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(exitTimeout):
		p.t.Fatalf("%s: did not exit within %v", p.name, exitTimeout)
	}
	var exitErr *exec.ExitError
	if p.waitErr != nil && !errors.As(p.waitErr, &exitErr) {
		p.t.Fatalf("%s: wait: %v", p.name, p.waitErr)
	}
	return p.cmd.ProcessState.ExitCode()
}

// client returns an HTTP client of the child; uses, when not nil, counts
// the requests made with each API key.
func (p *proc) client(uses *keyUses) *client {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	p.t.Cleanup(tr.CloseIdleConnections)
	return &client{t: p.t, base: "http://" + p.addr, uses: uses,
		hc: &http.Client{Transport: tr, Timeout: 20 * time.Second}}
}

// lineLog collects the lines of one output stream of a child and lets a
// test wait for a line.
type lineLog struct {
	mu    sync.Mutex
	lines []string
	eof   bool
	// changed is closed and replaced when a line arrives or the stream
	// ends.
	changed chan struct{}
}

func newLineLog() *lineLog { return &lineLog{changed: make(chan struct{})} }

// consume reads r to its end. A line over maxLineBytes is reported as a
// line and the rest of the stream is drained, so the child never blocks
// writing to a pipe nobody reads.
func (l *lineLog) consume(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	for sc.Scan() {
		l.add(sc.Text(), false)
	}
	if err := sc.Err(); err != nil {
		l.add(fmt.Sprintf("(harness: cannot read the stream: %v)", err), false)
		_, _ = io.Copy(io.Discard, r)
	}
	l.add("", true)
}

func (l *lineLog) add(line string, eof bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if eof {
		l.eof = true
	} else {
		l.lines = append(l.lines, line)
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

var errStreamEnded = errors.New("the stream ended (the process exited)")

// waitFor returns the first line that matches, waiting up to timeout for
// it to be written.
func (l *lineLog) waitFor(match func(string) bool, timeout time.Duration) (string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for seen := 0; ; {
		l.mu.Lock()
		for ; seen < len(l.lines); seen++ {
			if match(l.lines[seen]) {
				line := l.lines[seen]
				l.mu.Unlock()
				return line, nil
			}
		}
		eof, changed := l.eof, l.changed
		l.mu.Unlock()
		if eof {
			return "", errStreamEnded
		}
		select {
		case <-changed:
		case <-deadline.C:
			return "", fmt.Errorf("no such line within %v", timeout)
		}
	}
}

// count returns how many lines contain substr.
func (l *lineLog) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

func (l *lineLog) contains(substr string) bool { return l.count(substr) > 0 }

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, line := range l.lines {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
