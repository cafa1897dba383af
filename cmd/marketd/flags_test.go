package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"marketd/core/money"
)

// TestFsyncOffWarns checks that -fsync=off says loudly, at start, that
// acknowledged changes can be lost (docs/API.md, "Conventions").
func TestFsyncOffWarns(t *testing.T) {
	t.Parallel()
	p := startProc(t, "fsync off", procOptions{dataDir: t.TempDir(), args: []string{"-fsync=off"}})
	// No wait: the warning precedes the listening line on the same stream.
	line, err := p.stderr.waitFor(func(s string) bool { return strings.Contains(s, "FSYNC IS OFF") }, 0)
	if err != nil || !strings.Contains(line, "level=WARN") {
		t.Fatalf("no warning about -fsync=off before the listening line (%v): %q", err, line)
	}
	c := p.client(nil)
	c.register("fast_alice")
	if code := p.terminate(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
}

// TestSignupBonusFromEnv checks that MARKETD_SIGNUP_BONUS sets the bonus
// of new accounts and that the flag on the command line wins over it.
func TestSignupBonusFromEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want money.Amount
	}{
		{"env", []string{"MARKETD_SIGNUP_BONUS=50"}, nil, money.Units(50)},
		{"flag wins over env", []string{"MARKETD_SIGNUP_BONUS=50"}, []string{"-signup-bonus", "70"}, money.Units(70)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startProc(t, "marketd", procOptions{dataDir: t.TempDir(), env: tc.env, args: tc.args})
			c := p.client(nil)
			tok, agent := c.register("bonus_bob")
			pts := c.points(sessionCred(tok))
			if agent.Balance != tc.want || pts.Balance != tc.want || len(pts.Ledger) != 1 || pts.Ledger[0].Amount != tc.want {
				t.Fatalf("env %q, args %q: balance %s, points %+v; want %s from the signup bonus",
					tc.env, tc.args, agent.Balance, pts, tc.want)
			}
		})
	}
}

// TestInvalidConfigExits checks that a bad flag or environment value, or
// an address in use, stops the server before it touches anything, with a
// message naming it: the listeners open before the data directory is
// locked and recovered (run).
func TestInvalidConfigExits(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = taken.Close() }) // after the parallel cases, unlike a defer
	addr := taken.Addr().String()
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		msg  string
	}{
		{"fsync", []string{"-fsync=sometimes"}, nil, `-fsync: "sometimes" is neither always nor off`},
		{"negative bonus", []string{"-signup-bonus=-5"}, nil, "-signup-bonus"},
		{"not a number", []string{"-password-cost=abc"}, nil, `invalid value "abc" for flag -password-cost`},
		{"unknown tier", []string{"-default-tier=gold"}, nil, "-default-tier"},
		{"unknown flag", []string{"-no-such-flag"}, nil, "flag provided but not defined: -no-such-flag"},
		{"extra argument", []string{"serve"}, nil, "unexpected arguments"},
		{"bad env", nil, []string{"MARKETD_SIGNUP_BONUS=lots"}, "MARKETD_SIGNUP_BONUS"},
		{"env out of range", nil, []string{"MARKETD_ANON_RATE=0"}, "-anon-rate"},
		{"address in use", []string{"-addr", addr}, nil, "listen on " + addr},
		// After the API server listens, which is stopped again.
		{"metrics address in use", []string{"-metrics-addr", addr}, nil, "listen on -metrics-addr " + addr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dataDir := filepath.Join(t.TempDir(), "data")
			ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
			defer cancel()
			args := append([]string{"-addr", "127.0.0.1:0", "-data", dataDir}, tc.args...)
			cmd := exec.CommandContext(ctx, binPath, args...)
			cmd.Env = append(cleanEnv(), tc.env...)
			out, err := cmd.CombinedOutput()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() == 0 {
				t.Fatalf("args %q, env %q: %v, want a non-zero exit; output:\n%s", args, tc.env, err, out)
			}
			if !strings.Contains(string(out), tc.msg) {
				t.Fatalf("args %q, env %q: output does not mention %q:\n%s", args, tc.env, tc.msg, out)
			}
			if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("args %q, env %q: the data directory was created (%v)", args, tc.env, err)
			}
		})
	}
}

var generatedPasswordRE = regexp.MustCompile(`created account admin with password (\S+)`)

// TestGeneratedAdminPassword checks that without -admin-password the
// server prints a generated one once, on stdout, that it logs the admin
// in, and that a restart neither prints another nor changes it.
func TestGeneratedAdminPassword(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := startProc(t, "first run", procOptions{dataDir: dir, generatedAdmin: true})
	line, err := first.stdout.waitFor(generatedPasswordRE.MatchString, startTimeout)
	if err != nil {
		t.Fatalf("no generated password on stdout: %v", err)
	}
	pw := generatedPasswordRE.FindStringSubmatch(line)[1]
	c := first.client(nil)
	admin := sessionCred(c.login("admin", pw))
	if me := c.me(admin); me.Agent.Role != "admin" {
		t.Fatalf("admin profile %+v: want role admin", me.Agent)
	}
	c.createMarket(admin, "made by the generated admin", nil)
	if code := first.terminate(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
	if n := first.stdout.count(pw); n != 1 || first.stderr.contains(pw) {
		t.Fatalf("the password shows %d times on stdout (want once), on stderr: %v", n, first.stderr.contains(pw))
	}

	second := startProc(t, "restart", procOptions{dataDir: dir, generatedAdmin: true})
	c = second.client(nil)
	c.me(admin) // the session survived
	c.login("admin", pw)
	c.mustError(http.MethodPost, "/api/auth/login", cred{}, map[string]any{"name": "admin", "password": "not-the-password"},
		http.StatusUnauthorized, "Invalid credentials")
	if code := second.stop(syscall.SIGINT); code != 0 {
		t.Fatalf("restart: exit code %d after SIGINT, want 0", code)
	}
	if out := second.stdout.String(); out != "" {
		t.Fatalf("restart printed on stdout: %q, want nothing", out)
	}
}

// TestSpareProcessors checks the processors the server runs on: one spare
// beyond the runtime's default unless -spare-procs says otherwise, and the
// GOMAXPROCS environment variable winning over both (README.md, "Flags").
func TestSpareProcessors(t *testing.T) {
	procsRE := regexp.MustCompile(`msg=processors gomaxprocs=(\d+) recovering=(\d+)`)
	readyRE := regexp.MustCompile(`msg=ready .*gomaxprocs=(\d+)`)
	count := func(t *testing.T, env, args []string) int {
		t.Helper()
		p := startProc(t, "marketd", procOptions{dataDir: t.TempDir(), env: env, args: args})
		line, err := p.stderr.waitFor(procsRE.MatchString, 0)
		if err != nil {
			t.Fatalf("env %q, args %q: no processors line: %v", env, args, err)
		}
		m := procsRE.FindStringSubmatch(line)
		n, err := strconv.Atoi(m[1])
		if err != nil {
			t.Fatalf("processors line %q: %v", line, err)
		}
		// Recovery on the CPUs, not on the spare processors; serving on all.
		if rec, _ := strconv.Atoi(m[2]); rec > runtime.NumCPU() || rec > n || rec < 1 {
			t.Errorf("env %q, args %q: recovering on %d processors of %d, with %d CPUs", env, args, rec, n, runtime.NumCPU())
		}
		ready, err := p.stderr.waitFor(readyRE.MatchString, 0)
		if err != nil {
			t.Fatalf("env %q, args %q: no ready line: %v", env, args, err)
		}
		if got := readyRE.FindStringSubmatch(ready)[1]; got != strconv.Itoa(n) {
			t.Errorf("env %q, args %q: ready on %s processors, want %d", env, args, got, n)
		}
		if code := p.terminate(); code != 0 {
			t.Fatalf("exit code %d after SIGTERM, want 0", code)
		}
		return n
	}
	// An empty GOMAXPROCS is unset, for the runtime and for the server.
	unset := []string{"GOMAXPROCS="}
	base := count(t, unset, []string{"-spare-procs", "0"})
	if got := count(t, unset, nil); got != base+1 {
		t.Errorf("default: %d processors, want the runtime's %d and one spare", got, base)
	}
	if got := count(t, unset, []string{"-spare-procs", "2"}); got != base+2 {
		t.Errorf("-spare-procs 2: %d processors, want %d", got, base+2)
	}
	if got := count(t, []string{"GOMAXPROCS=1"}, []string{"-spare-procs", "2"}); got != 1 {
		t.Errorf("GOMAXPROCS=1 with -spare-procs 2: %d processors, want the environment's 1", got)
	}
}
