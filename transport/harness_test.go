package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"marketd/core"
	"marketd/core/money"
	"marketd/internal/apiclient"
	"marketd/internal/manualclock"
	"marketd/wal"
)

// testServer is a Server on a loopback port over a real log (without
// fsync: these tests are about HTTP, not durability).
type testServer struct {
	t      *testing.T
	url    string
	eng    *core.Engine
	srv    *Server
	client *http.Client
	log    *wal.Log
}

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

func newTestServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	return startTestServer(t, cfg, nil, nil)
}

// startTestServer starts a server over a fresh engine and log. clk, when
// not nil, is the time of both the engine and the server: the server
// computes expiries, windows and statuses, the engine decides whether a key
// is active or a market trades, and the two must agree. before, when not
// nil, runs on the Server before it accepts connections: tests use it to
// add routes of their own without a production hook.
func startTestServer(t *testing.T, cfg Config, clk *manualclock.Clock, before func(*Server)) *testServer {
	t.Helper()
	return startTestServerEngine(t, cfg, core.Config{}, clk, before)
}

// startTestServerEngine is startTestServer with the engine's settings
// besides its loops (off) and its clock (clk's).
func startTestServerEngine(t *testing.T, cfg Config, ecfg core.Config, clk *manualclock.Clock, before func(*Server)) *testServer {
	t.Helper()
	log, err := wal.Open(t.TempDir(), wal.Options{NoFsync: true, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	log.Start()
	ecfg.CloseInterval, ecfg.OracleInterval = -1, -1
	if clk != nil {
		ecfg.Now, cfg.Now = clk.Now, clk.Now
	}
	eng := core.NewEngine(core.NewState(), log, ecfg)
	if cfg.PasswordCost == 0 {
		cfg.PasswordCost = 4
	}
	// Every test client is 127.0.0.1: the per-address limits are off
	// unless a test sets them (limits_test.go).
	if cfg.RegistrationsPerHour == 0 {
		cfg.RegistrationsPerHour = -1
	}
	if cfg.PasswordChecksPerMinute == 0 {
		cfg.PasswordChecksPerMinute = -1
	}
	if cfg.KeyChangesPerHour == 0 {
		cfg.KeyChangesPerHour = -1
	}
	if cfg.SignupBonus == 0 {
		cfg.SignupBonus = money.Units(1000)
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	srv := New(eng, cfg)
	if before != nil {
		before(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	client := &http.Client{Timeout: 10 * time.Second}
	t.Cleanup(func() {
		// Concurrent requests can leave a connection the client dialled
		// and never used, and a dial still under way when a test closes
		// its idle connections lands in the pool after; Shutdown would
		// wait for it until its read timeout.
		client.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		eng.Close()
		if err := eng.State().Check(); err != nil {
			t.Errorf("invariants after the test: %v", err)
		}
		if err := log.Close(); err != nil {
			t.Error(err)
		}
	})
	return &testServer{t: t, url: "http://" + ln.Addr().String(), eng: eng, srv: srv,
		client: client, log: log}
}

// sub returns a copy of ts that reports to t, for use inside t.Run.
func (ts *testServer) sub(t *testing.T) *testServer {
	c := *ts
	c.t = t
	return &c
}

// auth is how a test request authenticates: an API key, a session
// cookie, or nothing.
type auth struct {
	key     string
	session string
}

// response is an answer as the tests look at it.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

// errorMessage returns the message of an error body, after checking it
// with parseErrorBody: every test that looks at an error walks one error
// path.
func (r response) errorMessage(t *testing.T) string {
	t.Helper()
	msg, err := parseErrorBody(r.status, r.header.Get(HeaderRequestID), r.body)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// parseErrorBody returns the message of an error body after checking the
// body's shape (apiclient.ParseError) and its code against the list of
// codes (checkErrorCode).
func parseErrorBody(status int, requestID string, body []byte) (string, error) {
	h := http.Header{}
	h.Set(HeaderRequestID, requestID)
	e, err := apiclient.ParseError(apiclient.Reply{Status: status, Header: h, Body: body})
	if err != nil {
		return "", err
	}
	if err := checkErrorCode(status, e.Code, e.Error); err != nil {
		return "", fmt.Errorf("error body %s: %w", body, err)
	}
	return e.Error, nil
}

func (ts *testServer) do(method, path string, a auth, body string) response {
	ts.t.Helper()
	return ts.doHeaders(method, path, a, body, nil)
}

// doHeaders is do with more request headers.
func (ts *testServer) doHeaders(method, path string, a auth, body string, headers map[string]string) response {
	ts.t.Helper()
	var raw []byte
	if body != "" {
		raw = []byte(body)
	}
	api := apiclient.Client{Base: ts.url, HTTP: ts.client}
	r, err := api.Do(method, path, apiclient.Cred{Key: a.key, Session: a.session}, raw, headers)
	if err != nil {
		ts.t.Fatal(err)
	}
	if ct := r.Header.Get("Content-Type"); ct != contentTypeJSON {
		ts.t.Errorf("%s %s: Content-Type %q, body %q", method, path, ct, r.Body)
	}
	return response{status: r.Status, header: r.Header, body: bytes.TrimSpace(r.Body)}
}

// expect fails the test unless r has the status, and, when msg is not
// empty, the error message.
func (ts *testServer) expect(r response, status int, msg string) {
	ts.t.Helper()
	if r.status != status {
		ts.t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if msg != "" {
		if got := r.errorMessage(ts.t); got != msg {
			ts.t.Fatalf("error %q, want %q", got, msg)
		}
	}
}

// register creates an account and returns its session token.
func (ts *testServer) register(name string) string {
	ts.t.Helper()
	r := ts.do("POST", "/api/auth/register", auth{}, `{"name":"`+name+`","password":"password-`+name+`"}`)
	ts.expect(r, http.StatusCreated, "")
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == sessionCookie {
			return c.Value
		}
	}
	ts.t.Fatalf("register %s: no session cookie in %v", name, r.header)
	return ""
}

// newKey creates a key with the given scopes for the session's account.
func (ts *testServer) newKey(session string, scopes ...string) string {
	ts.t.Helper()
	b, _ := json.Marshal(map[string]any{"name": "k", "scopes": scopes})
	r := ts.do("POST", "/api/keys", auth{session: session}, string(b))
	ts.expect(r, http.StatusCreated, "")
	return r.json(ts.t)["key"].(string)
}

// admin creates an admin account directly and returns its session.
func (ts *testServer) admin() string {
	ts.t.Helper()
	if err := ts.srv.CreateAdmin(context.Background(), "admin", "admin-password"); err != nil {
		ts.t.Fatal(err)
	}
	r := ts.do("POST", "/api/auth/login", auth{}, `{"name":"admin","password":"admin-password"}`)
	ts.expect(r, http.StatusOK, "")
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == sessionCookie {
			return c.Value
		}
	}
	ts.t.Fatal("admin login: no cookie")
	return ""
}
