package transport

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"marketd/core"
	"marketd/wal"
)

// TestPhases walks a server through its phases and checks, in each, the
// answers of /healthz, /readyz and an API route (docs/API.md, "Health").
func TestPhases(t *testing.T) {
	var logErr atomic.Pointer[error]
	srv := New(nil, Config{Logger: quietLogger, PasswordCost: 4, LogErr: func() error {
		if p := logErr.Load(); p != nil {
			return *p
		}
		return nil
	}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	ts := &testServer{t: t, url: "http://" + ln.Addr().String(), srv: srv, client: &http.Client{Timeout: 10 * time.Second}}

	check := func(phase string, ready int, readyMsg string, api int, apiMsg string) {
		t.Helper()
		ts.expect(ts.do("GET", "/healthz", auth{}, ""), http.StatusOK, "")
		ts.expect(ts.do("GET", "/readyz", auth{}, ""), ready, readyMsg)
		ts.expect(ts.do("GET", "/api/markets", auth{}, ""), api, apiMsg)
		ts.expect(ts.do("POST", "/api/auth/login", auth{}, `{"name":"x","password":"password-x"}`), max(api, 401), apiMsg)
		if got := srv.Phase().String(); got != phase {
			t.Fatalf("phase %s, want %s", got, phase)
		}
	}
	check("recovering", 503, "Recovering", 503, "Recovering")

	log, err := wal.Open(t.TempDir(), wal.Options{NoFsync: true, Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	log.Start()
	eng := core.NewEngine(core.NewState(), log, core.Config{CloseInterval: -1, OracleInterval: -1})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		eng.Close()
		if err := log.Close(); err != nil {
			t.Error(err)
		}
	})
	srv.Attach(eng)
	check("recovering", 503, "Recovering", 503, "Recovering")
	srv.Open()
	check("serving", 200, "", 200, "")

	failure := errors.New("fsync: input/output error")
	logErr.Store(&failure)
	// From the moment the log fails, before the process calls Fail, the
	// API answers 503 too: memory may hold changes that are not durable.
	check("serving", 503, "Log failed", 503, "Log failed")
	logErr.Store(nil)

	srv.Drain()
	check("draining", 503, "Draining", 200, "")
	srv.Fail()
	check("failed", 503, "Log failed", 503, "Log failed")
}

// TestShutdownRefusesWhatItCannotAnswer: once Shutdown has begun, an API
// route answers 503 shutting_down and changes nothing, so that a request
// fasthttp reads on a connection it is closing as idle is never applied
// without an answer (docs/API.md, "Errors"). The handler is called
// directly, as fasthttp would call it for such a request.
func TestShutdownRefusesWhatItCannotAnswer(t *testing.T) {
	ts := newTestServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ts.client.CloseIdleConnections()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var rc fasthttp.RequestCtx
	rc.Request.Header.SetMethod("POST")
	rc.Request.SetRequestURI("/api/auth/register")
	rc.Request.Header.SetContentType("application/json")
	rc.Request.SetBodyString(`{"name":"late","password":"password-late"}`)
	ts.srv.Handler()(&rc)
	if got := rc.Response.StatusCode(); got != fasthttp.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503: %s", got, rc.Response.Body())
	}
	if body := string(rc.Response.Body()); !strings.Contains(body, `"code":"shutting_down"`) {
		t.Errorf("body %s, want code shutting_down", body)
	}
	if got := string(rc.Response.Header.Peek("Retry-After")); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	if _, ok := ts.eng.AccountByName("late"); ok {
		t.Error("the refused registration created its account")
	}
}
