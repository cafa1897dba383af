package transport

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"marketd/core"
)

// TestFailStopAnswersEverything503: once the journal reports a failure,
// every request, reads and routes that do not exist included, is answered
// 503 log_failed with Retry-After; before it, requests are served.
func TestFailStopAnswersEverything503(t *testing.T) {
	var failed atomic.Pointer[error]
	ts := newTestServer(t, Config{JournalErr: func() error {
		if p := failed.Load(); p != nil {
			return *p
		}
		return nil
	}})
	if r := ts.do(http.MethodGet, "/api/markets/active", auth{}, ""); r.status != http.StatusOK {
		t.Fatalf("before the failure: %d %s", r.status, r.body)
	}
	err := errors.Join(core.ErrJournalFailed, errors.New("fsync: input/output error"))
	failed.Store(&err)
	for _, req := range []struct{ method, path, body string }{
		{http.MethodGet, "/api/markets/active", ""},
		{http.MethodPost, "/api/auth/register", `{"name":"alice","password":"password1"}`},
		{http.MethodGet, "/no/such/path", ""},
	} {
		r := ts.do(req.method, req.path, auth{}, req.body)
		body := r.json(t)
		if r.status != http.StatusServiceUnavailable || body["code"] != "log_failed" || r.header.Get("Retry-After") != "1" {
			t.Errorf("%s %s after the failure: %d %v, want 503 log_failed with Retry-After", req.method, req.path, r.status, body)
		}
	}
}

// TestJournalFailureIs503: an operation whose record the journal failed
// to make durable maps to 503 log_failed through the error table.
func TestJournalFailureIs503(t *testing.T) {
	ae, ok := toAPIError(errors.Join(errors.New("wal: log failed"), core.ErrJournalFailed))
	if !ok || ae.status != http.StatusServiceUnavailable || ae.code != "log_failed" {
		t.Fatalf("got %+v %v, want 503 log_failed", ae, ok)
	}
}
